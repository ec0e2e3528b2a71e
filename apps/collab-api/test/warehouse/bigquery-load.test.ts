/** Load jobs on BigQuery: a BigQuery load job from the object in Cloud Storage, once per load id. */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@repo/config';
import { z } from 'zod';
import {
  checkWarehouseSettings,
  createWarehouse,
  type Field,
  LoadFailure,
  type LoadRequest,
  physicalNames,
  type Warehouse,
  warehouseSettings,
} from '../../src/adapters/warehouse/index.js';
import { type FakeBigQuery, startFakeBigQuery } from './fake-bigquery.js';

jest.setTimeout(30_000);

const PROJECT = 'collab-test';
let bigquery: FakeBigQuery;
let warehouse: Warehouse;

beforeAll(async () => {
  bigquery = await startFakeBigQuery(PROJECT);
  const settings = loadConfig(z.object(warehouseSettings()).superRefine(checkWarehouseSettings), {
    COLLAB_WAREHOUSE: 'bigquery',
    COLLAB_BIGQUERY_PROJECT: PROJECT,
    COLLAB_BIGQUERY_LOCATION: 'EU',
    COLLAB_BIGQUERY_API_ENDPOINT: bigquery.url,
    COLLAB_BIGQUERY_CREDENTIALS: 'none',
  });
  warehouse = await createWarehouse(settings, { dataDir: '/nonexistent' });
});
afterAll(async () => {
  await warehouse.close();
  await bigquery.close();
});

const fields: Field[] = [
  { name: 'id', type: 'INT64', mode: 'REQUIRED', private: true },
  { name: 'name', type: 'STRING', mode: 'NULLABLE', private: false },
];

async function table() {
  const ref = { datasetId: randomUUID(), tableId: randomUUID() };
  await warehouse.createDataset(ref.datasetId);
  await warehouse.createTable(ref, fields);
  return ref;
}

function request(overrides: Partial<LoadRequest> = {}): LoadRequest {
  return {
    loadId: randomUUID(),
    format: 'CSV',
    disposition: 'WRITE_APPEND',
    fields,
    autodetect: false,
    csvHeader: ['id', 'name'],
    source: { uri: 'gs://bucket/load-jobs/t/u/people.csv', localFile: () => Promise.reject(new Error('not read locally')) },
    signal: new AbortController().signal,
    ...overrides,
  };
}

it('inserts a load job from the gs:// object with the table’s schema, and follows it to its outcome', async () => {
  const ref = await table();
  bigquery.loadsWill({ rows: 3 });
  const load = request({ format: 'JSON' });
  const prepared = await warehouse.prepareLoad(ref, { ...load, format: 'JSON', csvHeader: undefined });
  expect(prepared.fields).toEqual(fields);
  expect(await prepared.commit()).toEqual({ rowsLoaded: 3, bytesProcessed: 30 });
  const { dataset, table: tableName } = physicalNames(ref);
  const job = bigquery.jobs.get(`collab_load_${load.loadId.replaceAll('-', '_')}`)!;
  expect(job.configuration.load).toEqual({
    sourceUris: ['gs://bucket/load-jobs/t/u/people.csv'],
    sourceFormat: 'NEWLINE_DELIMITED_JSON',
    destinationTable: { projectId: PROJECT, datasetId: dataset, tableId: tableName },
    createDisposition: 'CREATE_NEVER',
    writeDisposition: 'WRITE_APPEND',
    maxBadRecords: 0,
    schema: {
      fields: [
        { name: 'id', type: 'INT64', mode: 'REQUIRED' },
        { name: 'name', type: 'STRING', mode: 'NULLABLE' },
      ],
    },
  });
  expect(job.jobReference.location).toBe('EU');
});

it('loads once per load id: asked again, it follows the first job; findLoad reports it', async () => {
  const ref = await table();
  bigquery.loadsWill({ rows: 2 });
  const load = request();
  await (await warehouse.prepareLoad(ref, load)).commit();
  expect(await (await warehouse.prepareLoad(ref, load)).commit()).toEqual({ rowsLoaded: 2, bytesProcessed: 20 });
  expect(await warehouse.tableRowCount(ref)).toBe(2);
  expect(await warehouse.findLoad(ref, load.loadId)).toEqual({ rowsLoaded: 2, bytesProcessed: 20 });
  expect(await warehouse.findLoad(ref, randomUUID())).toBeUndefined();
  const options = bigquery.jobs.get(`collab_load_${load.loadId.replaceAll('-', '_')}`)!.configuration.load;
  expect(options).toMatchObject({ encoding: 'UTF-8', allowQuotedNewlines: true, skipLeadingRows: 1 });
});

it('lets BigQuery infer the columns with autodetect, and answers them for the records (private flags off)', async () => {
  const ref = await table();
  bigquery.loadsWill({ rows: 1, detected: [{ name: 'amount', type: 'FLOAT', mode: 'NULLABLE' }] });
  const load = request({ autodetect: true, disposition: 'WRITE_TRUNCATE' });
  const prepared = await warehouse.prepareLoad(ref, load);
  expect(prepared.fields).toBeUndefined();
  expect(await prepared.commit()).toEqual({
    rowsLoaded: 1,
    bytesProcessed: 10,
    fields: [{ name: 'amount', type: 'FLOAT64', mode: 'NULLABLE', private: false }],
  });
  expect(bigquery.jobs.get(`collab_load_${load.loadId.replaceAll('-', '_')}`)!.configuration.load).toMatchObject({
    autodetect: true,
    writeDisposition: 'WRITE_TRUNCATE',
  });
});

it('turns the job’s errors into the load’s problems, the column named where BigQuery names it', async () => {
  const ref = await table();
  bigquery.loadsWill({
    errors: [
      {
        reason: 'invalid',
        message: 'Error while reading data, error message: CSV table encountered too many errors, giving up. Rows: 1; errors: 1.',
      },
      { reason: 'invalid', message: "Could not parse 'x' as INT64 for field id (position 0) starting at location 9" },
    ],
  });
  const failure = await (await warehouse.prepareLoad(ref, request())).commit().catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(LoadFailure);
  expect(failure).toMatchObject({
    message: 'The file has 2 problems (BigQuery refused the load); nothing was loaded',
    problemCount: 2,
    problems: [
      { row: null, column: null, reason: expect.stringContaining('too many errors') },
      { row: null, column: 'id', reason: expect.stringContaining("Could not parse 'x' as INT64") },
    ],
  });
});

it('refuses a file that is not in Cloud Storage', async () => {
  const ref = await table();
  await expect(
    warehouse.prepareLoad(ref, request({ source: { uri: 'local://x', localFile: () => Promise.resolve('/x') } })),
  ).rejects.toThrow('BigQuery loads files from Cloud Storage');
});
