import { z } from 'zod';
import { crashTestSettings, httpSettings, setting, storageSettings } from '@repo/config';
import { checkStorageBackendSettings, storageBackendSettings } from '@repo/storage/settings';
import { checkNotificationSettings, notificationSettings } from './adapters/notifications/settings.js';
import { checkWarehouseSettings, warehouseSettings } from './adapters/warehouse/settings.js';
import { agentSettings } from './agents/settings.js';
import { approvalSettings } from './approvals/settings.js';
import { type AuthSettings, authSettings, checkAuthSettings } from './auth/settings.js';
import { workerSettings } from './jobs/settings.js';
import { exportSettings } from './exports/settings.js';
import { loadJobSettings } from './load-jobs/settings.js';
import { checkMemorySettings, memorySettings } from './memory/settings.js';
import { queryJobSettings } from './query-jobs/settings.js';
import { quotaSettings } from './quota/settings.js';

/** Every environment variable collab-api reads. The README's configuration table mirrors this. */
export const configSchema = z
  .object({
    ...httpSettings({ port: 8100 }),
    ...storageSettings(),
    ...authSettings(),
    ...warehouseSettings(),
    ...memorySettings(),
    COLLAB_WAREHOUSE_LEASE_SECONDS: setting
      .integer({ min: 1, max: 86_400 })
      .default(120)
      .describe(
        'How long a warehouse change (of a dataset or table) may stay under way before it is taken for interrupted (its process stopped) and finished by the reconciler. Keep it well above the longest warehouse call (BigQuery retries for some 15 s).',
      ),
    COLLAB_RECONCILE_INTERVAL_SECONDS: setting
      .integer({ min: 0, max: 86_400 })
      .default(60)
      .describe(
        'How often the reconciler finishes warehouse changes that a crash interrupted (it also runs at start-up); 0: at start-up only.',
      ),
    COLLAB_WAREHOUSE_SWEEP_INTERVAL_SECONDS: setting
      .integer({ min: 0, max: 604_800 })
      .default(3600)
      .describe(
        'How often the reconciler compares the whole warehouse with the records, dropping datasets and tables that no live record has and making again those of live records that are missing (it also does at start-up); 0: at start-up only. The warehouse (BigQuery project, DuckDB file) must belong to this database alone.',
      ),
    ...agentSettings(),
    REDIS_URL: setting
      .url({ protocols: ['redis:', 'rediss:'] })
      .optional()
      .describe("Redis for the agents' rate-limit counters, so that replicas share them. Unset: counted in each process."),
    ...storageBackendSettings(),
    ...workerSettings(),
    ...loadJobSettings(),
    ...queryJobSettings(),
    ...quotaSettings(),
    ...exportSettings(),
    ...approvalSettings(),
    ...notificationSettings(),
    ...crashTestSettings(),
  })
  .superRefine((config, ctx) => {
    checkAuthSettings(config, ctx, { secretGenerated: generatesLocalSecret(config) });
    checkWarehouseSettings(config, ctx);
    checkMemorySettings(config, ctx);
    checkStorageBackendSettings(config, ctx);
    checkNotificationSettings(config, ctx);
    // Load files are streamed in and out; a database row holds its whole value.
    if (config.STORAGE_BACKEND === 'database') {
      ctx.addIssue({ code: 'custom', path: ['STORAGE_BACKEND'], message: 'must be local or gcs for collab-api' });
    }
    // DuckDB's file is open in one process only, the one that loads into it.
    if (config.COLLAB_WAREHOUSE === 'duckdb' && config.COLLAB_WORKER !== 'inline') {
      ctx.addIssue({ code: 'custom', path: ['COLLAB_WORKER'], message: 'must be inline with the DuckDB warehouse' });
    }
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
