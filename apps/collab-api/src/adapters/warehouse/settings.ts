import { setting } from '@repo/config';
import type { z } from 'zod';

const WAREHOUSE_KINDS = ['duckdb', 'bigquery'] as const;

// DuckDB's sizes: a number and a unit (bytes, decimal or binary).
const DUCKDB_SIZE = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;
const UNIT_BYTES: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A size in DuckDB's syntax (checked by the setting), in bytes: `256MB` is 256,000,000, `1GiB` 2^30. */
export function duckDbSizeBytes(size: string): number {
  const [, amount, unit] = DUCKDB_SIZE.exec(size.trim())!;
  return Number(amount) * UNIT_BYTES[unit!.toLowerCase()]!;
}

/**
 * The warehouse's environment variables, to spread into the app's configuration schema, whose
 * `superRefine` calls checkWarehouseSettings.
 */
export function warehouseSettings() {
  return {
    COLLAB_WAREHOUSE: setting
      .oneOf(WAREHOUSE_KINDS)
      .default('duckdb')
      .describe('Warehouse that mirrors datasets and tables: duckdb (one file under DATA_DIR) or bigquery.'),
    COLLAB_BIGQUERY_PROJECT: setting
      .string()
      .optional()
      .describe('Google Cloud project that holds the BigQuery datasets. Required with COLLAB_WAREHOUSE=bigquery.'),
    COLLAB_BIGQUERY_LOCATION: setting
      .string()
      .default('US')
      .describe('BigQuery location of new datasets, e.g. US, EU or europe-west1.'),
    COLLAB_BIGQUERY_API_ENDPOINT: setting
      .url()
      .optional()
      .describe("BigQuery API base URL instead of Google's, e.g. an emulator. Unset: Google's endpoint."),
    COLLAB_BIGQUERY_CREDENTIALS: setting
      .string()
      .optional()
      .describe(
        "Path of a service-account key file for BigQuery, or `none` for unauthenticated requests (emulators). Unset: Google's application default credentials (GOOGLE_APPLICATION_CREDENTIALS, workload identity).",
      ),
    COLLAB_DUCKDB_MEMORY_LIMIT: setting
      .string()
      .refine((value) => DUCKDB_SIZE.test(value), 'must be a size such as 256MB or 1GiB')
      .default('256MB')
      .describe(
        "Most memory DuckDB's buffer pool takes in this process (loads, queries), e.g. 256MB or 1GiB; beyond it DuckDB spills to `warehouse.duckdb.tmp` beside its file under DATA_DIR. DuckDB's own default is 80% of the machine's memory.",
      ),
    COLLAB_DUCKDB_THREADS: setting
      .integer({ min: 1, max: 256 })
      .optional()
      .describe('Threads DuckDB works with. Unset: one per CPU core.'),
  };
}

export type WarehouseSettings = z.output<z.ZodObject<ReturnType<typeof warehouseSettings>>>;

/** Checks that involve more than one variable; each issue names the variable to set. */
export function checkWarehouseSettings(settings: WarehouseSettings, ctx: z.RefinementCtx): void {
  if (settings.COLLAB_WAREHOUSE === 'bigquery' && !settings.COLLAB_BIGQUERY_PROJECT) {
    ctx.addIssue({
      code: 'custom',
      path: ['COLLAB_BIGQUERY_PROJECT'],
      message: 'is required when COLLAB_WAREHOUSE is bigquery: the Google Cloud project of the datasets',
    });
  }
  if (settings.COLLAB_BIGQUERY_CREDENTIALS === 'none' && !settings.COLLAB_BIGQUERY_API_ENDPOINT) {
    ctx.addIssue({
      code: 'custom',
      path: ['COLLAB_BIGQUERY_CREDENTIALS'],
      message: "may be none only with COLLAB_BIGQUERY_API_ENDPOINT: Google's endpoint needs credentials",
    });
  }
}
