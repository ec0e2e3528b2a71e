import { configProblems, documentSettings, loadConfig } from '@repo/config';
import { z } from 'zod';
import { checkWarehouseSettings, warehouseSettings } from '../../src/adapters/warehouse/settings.js';

const schema = z.object(warehouseSettings()).superRefine(checkWarehouseSettings);

const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

describe('warehouse settings', () => {
  it('default to DuckDB', () => {
    expect(loadConfig(schema, {})).toEqual({
      COLLAB_WAREHOUSE: 'duckdb',
      COLLAB_BIGQUERY_LOCATION: 'US',
      COLLAB_DUCKDB_MEMORY_LIMIT: '256MB',
    });
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
      COLLAB_DUCKDB_MEMORY_LIMIT: '256MB',
    });
  });

  it('take a DuckDB memory limit as DuckDB writes sizes, and refuse anything else', () => {
    expect(loadConfig(schema, { COLLAB_DUCKDB_MEMORY_LIMIT: '1GiB', COLLAB_DUCKDB_THREADS: '2' })).toMatchObject({
      COLLAB_DUCKDB_MEMORY_LIMIT: '1GiB',
      COLLAB_DUCKDB_THREADS: 2,
    });
    for (const bad of ['lots', "256MB'; SET enable_external_access=true; --", '-1GB']) {
      expect(problemsOf({ COLLAB_DUCKDB_MEMORY_LIMIT: bad })).toEqual([
        expect.stringMatching(/^COLLAB_DUCKDB_MEMORY_LIMIT must be a size such as 256MB or 1GiB/),
      ]);
    }
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
