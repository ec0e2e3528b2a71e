import { z } from 'zod';
import { httpSettings, storageSettings } from '@repo/config';
import { checkWarehouseSettings, warehouseSettings } from './adapters/warehouse/index.js';
import { type AuthSettings, authSettings, checkAuthSettings } from './auth/index.js';

/** Every environment variable collab-api reads. The README's configuration table mirrors this. */
export const configSchema = z
  .object({
    ...httpSettings({ port: 8100 }),
    ...storageSettings(),
    ...authSettings(),
    ...warehouseSettings(),
  })
  .superRefine((config, ctx) => {
    checkAuthSettings(config, ctx, { secretGenerated: generatesLocalSecret(config) });
    checkWarehouseSettings(config, ctx);
  });

export type Config = z.output<typeof configSchema>;

/**
 * Without DATABASE_URL the service runs for local development on its embedded database; then,
 * with neither COLLAB_JWT_SECRET nor COLLAB_JWKS_URL, it signs and verifies tokens with a secret
 * it generates under DATA_DIR (see local-secret.ts), so `pnpm start` needs no configuration.
 * With DATABASE_URL, one of the two must be set.
 */
export function generatesLocalSecret(config: Pick<Config, 'DATABASE_URL'> & AuthSettings): boolean {
  return !config.DATABASE_URL && !config.COLLAB_JWT_SECRET && !config.COLLAB_JWKS_URL;
}
