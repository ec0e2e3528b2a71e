import type { Logger, Metrics } from '@repo/http';
import { createWarehouse } from './adapters/warehouse/index.js';
import type { Deps } from './app.js';
import { createTokenVerifier } from './auth/index.js';
import type { Config } from './config.js';
import type { Database } from './database.js';
import { resolveAuthSettings } from './local-secret.js';
import { defaultDataDir } from './paths.js';

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
