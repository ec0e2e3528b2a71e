import { configProblems, documentSettings, loadConfig } from '@repo/config';
import { z } from 'zod';
import { checkWarehouseSettings, warehouseSettings } from '../../src/adapters/warehouse/settings.js';

const schema = z.object(warehouseSettings()).superRefine(checkWarehouseSettings);

const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

describe('warehouse settings', () => {
  it('default to DuckDB', () => {
    expect(loadConfig(schema, {})).toEqual({ COLLAB_WAREHOUSE: 'duckdb', COLLAB_BIGQUERY_LOCATION: 'US' });
  });

  it('read a BigQuery configuration', () => {
    expect(
      loadConfig(schema, {
        COLLAB_WAREHOUSE: 'bigquery',
        COLLAB_BIGQUERY_PROJECT: 'acme-data',
        COLLAB_BIGQUERY_LOCATION: 'EU',
        COLLAB_BIGQUERY_CREDENTIALS: '/secrets/bigquery.json',
      }),
    ).toEqual({
      COLLAB_WAREHOUSE: 'bigquery',
      COLLAB_BIGQUERY_PROJECT: 'acme-data',
      COLLAB_BIGQUERY_LOCATION: 'EU',
      COLLAB_BIGQUERY_CREDENTIALS: '/secrets/bigquery.json',
    });
  });

  it('name what BigQuery is missing', () => {
    expect(problemsOf({ COLLAB_WAREHOUSE: 'bigquery' })).toEqual([
      'COLLAB_BIGQUERY_PROJECT is required when COLLAB_WAREHOUSE is bigquery: the Google Cloud project of the datasets',
    ]);
    expect(
      problemsOf({ COLLAB_WAREHOUSE: 'bigquery', COLLAB_BIGQUERY_PROJECT: 'p', COLLAB_BIGQUERY_CREDENTIALS: 'none' }),
    ).toEqual([
      "COLLAB_BIGQUERY_CREDENTIALS may be none only with COLLAB_BIGQUERY_API_ENDPOINT: Google's endpoint needs credentials (value hidden)",
    ]);
    expect(problemsOf({ COLLAB_WAREHOUSE: 'snowflake' })).toEqual([
      'COLLAB_WAREHOUSE must be one of duckdb, bigquery (got "snowflake")',
    ]);
  });

  it('describe every variable', () => {
    for (const doc of documentSettings(z.object(warehouseSettings()))) expect(doc.description).not.toBe('');
  });
});
