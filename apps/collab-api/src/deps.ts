import type { Logger, Metrics } from '@repo/http';
import { createWarehouse, type Warehouse } from './adapters/warehouse/index.js';
import { createTokenVerifier, type TokenVerifier } from './auth/index.js';
import type { Config } from './config.js';
import type { Database } from './database.js';
import { resolveAuthSettings } from './local-secret.js';
import { defaultDataDir } from './paths.js';

/** Everything the app talks to, built by createDeps (for server.ts and tests) and passed to buildApp. */
export interface Deps {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: Metrics;
  /** Verifies the bearer tokens of /api/v1 requests. */
  tokens: TokenVerifier;
  /** Mirrors datasets and tables. */
  warehouse: Warehouse;
}

/**
 * Builds the app's adapters from its configuration: the token verifier (with the development
 * secret under DATA_DIR when no other is configured) and the warehouse (DuckDB under DATA_DIR by
 * default). `close` releases what they hold.
 */
export async function createDeps(
  config: Config,
  base: { db: Database; logger: Logger; metrics: Metrics },
): Promise<{ deps: Deps; close: () => Promise<void> }> {
  const dataDir = config.DATA_DIR ?? defaultDataDir;
  const auth = await resolveAuthSettings(config, dataDir);
  if (auth.generatedSecretFile) {
    base.logger.warn(
      { secretFile: auth.generatedSecretFile },
      'COLLAB_JWT_SECRET is not set: tokens are signed with a secret generated for this data folder (development only). ' +
        'Mint one with `pnpm --filter collab-api cli token --sub <sub>`.',
    );
  }
  const warehouse = await createWarehouse(config, { dataDir });
  return {
    deps: { ...base, config, tokens: createTokenVerifier(auth), warehouse },
    close: () => warehouse.close(),
  };
}
