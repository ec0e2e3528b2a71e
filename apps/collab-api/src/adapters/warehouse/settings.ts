import { setting } from '@repo/config';
import type { z } from 'zod';

const WAREHOUSE_KINDS = ['duckdb', 'bigquery'] as const;

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
