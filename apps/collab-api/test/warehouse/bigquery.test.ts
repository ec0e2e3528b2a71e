import { randomUUID } from 'node:crypto';
import { loadConfig } from '@repo/config';
import { ConflictError, UpstreamError } from '@repo/errors';
import { closedPort } from '@repo/testing';
import { z } from 'zod';
import { createBigQueryWarehouse } from '../../src/adapters/warehouse/bigquery.js';
import {
  checkWarehouseSettings,
  createWarehouse,
  type Field,
  physicalNames,
  type TableRef,
  type Warehouse,
  warehouseSettings,
} from '../../src/adapters/warehouse/index.js';
import { type FakeBigQuery, startFakeBigQuery } from './fake-bigquery.js';

const PROJECT = 'collab-test';
const API = `/bigquery/v2/projects/${PROJECT}`;
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

beforeEach(() => {
  bigquery.requests.length = 0;
});

function field(name: string, type: Field['type'] = 'STRING', extra: Partial<Field> = {}): Field {
  return { name, type, mode: 'NULLABLE', private: false, ...extra };
}

function sent() {
  return bigquery.requests.map(({ method, path, query, body }) => ({ method, path, query, body }));
}

function tableOf(ref: TableRef) {
  const { dataset, table } = physicalNames(ref);
  return bigquery.tables.get(`${dataset}.${table}`);
}

async function newTable(fields: Field[], metadata = {}): Promise<TableRef> {
  const ref = { datasetId: randomUUID(), tableId: randomUUID() };
  await warehouse.createDataset(ref.datasetId);
  await warehouse.createTable(ref, fields, metadata);
  bigquery.requests.length = 0;
  return ref;
}

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the operation to fail');
}

describe('BigQuery warehouse', () => {
  it('creates a dataset in the configured location, without credentials for the emulator endpoint', async () => {
    const datasetId = randomUUID();
    const { dataset } = physicalNames({ datasetId });
    await warehouse.createDataset(datasetId, { description: 'Sales', friendlyName: 'sales', labels: { tenant: 't1' } });

    expect(warehouse.kind).toBe('bigquery');
    expect(sent()).toEqual([
      {
        method: 'POST',
        path: `${API}/datasets`,
        query: {},
        body: {
          datasetReference: { datasetId: dataset },
          location: 'EU',
          description: 'Sales',
          friendlyName: 'sales',
          labels: { tenant: 't1' },
        },
      },
    ]);
    expect(bigquery.requests[0]?.authorization).toBeUndefined();
  });

  it('patches a dataset with only the metadata given', async () => {
    const datasetId = randomUUID();
    await warehouse.createDataset(datasetId, { description: 'Sales' });
    bigquery.requests.length = 0;

    await warehouse.updateDataset(datasetId, { description: null, friendlyName: 'renamed' });

    const { dataset } = physicalNames({ datasetId });
    expect(sent()).toEqual([
      { method: 'PATCH', path: `${API}/datasets/${dataset}`, query: {}, body: { description: null, friendlyName: 'renamed' } },
    ]);
    expect(bigquery.datasets.get(dataset)).toMatchObject({ description: null, friendlyName: 'renamed', location: 'EU' });
  });

  it('deletes a dataset with its contents, and takes one already gone as deleted', async () => {
    const ref = await newTable([field('a')]);
    const { dataset } = physicalNames(ref);

    await warehouse.deleteDataset(ref.datasetId);
    await warehouse.deleteDataset(ref.datasetId);

    expect(sent()).toEqual([
      { method: 'DELETE', path: `${API}/datasets/${dataset}`, query: { deleteContents: 'true' }, body: undefined },
      { method: 'DELETE', path: `${API}/datasets/${dataset}`, query: { deleteContents: 'true' }, body: undefined },
    ]);
    expect(bigquery.datasets.has(dataset)).toBe(false);
    expect(tableOf(ref)).toBeUndefined();
  });

  it('creates a table with its schema, leaving the private flag out', async () => {
    const datasetId = randomUUID();
    await warehouse.createDataset(datasetId);
    bigquery.requests.length = 0;
    const ref = { datasetId, tableId: randomUUID() };
    const { dataset, table } = physicalNames(ref);

    await warehouse.createTable(
      ref,
      [
        field('id', 'INT64', { mode: 'REQUIRED' }),
        field('email', 'STRING', { description: 'Work address', private: true }),
        field('tags', 'STRING', { mode: 'REPEATED' }),
      ],
      { description: 'People', friendlyName: 'people', labels: { tenant: 't1' } },
    );

    expect(sent()).toEqual([
      {
        method: 'POST',
        path: `${API}/datasets/${dataset}/tables`,
        query: {},
        body: {
          tableReference: { projectId: PROJECT, datasetId: dataset, tableId: table },
          schema: {
            fields: [
              { name: 'id', type: 'INT64', mode: 'REQUIRED' },
              { name: 'email', type: 'STRING', mode: 'NULLABLE', description: 'Work address' },
              { name: 'tags', type: 'STRING', mode: 'REPEATED' },
            ],
          },
          description: 'People',
          friendlyName: 'people',
          labels: { tenant: 't1' },
        },
      },
    ]);
  });

  it('adds columns and relaxes modes of a table with rows through one tables.patch', async () => {
    const before = [field('id', 'INT64', { mode: 'REQUIRED' }), field('name')];
    const ref = await newTable(before);
    tableOf(ref)!.numRows = '42';
    const { dataset, table } = physicalNames(ref);

    const after = [field('id', 'INT64'), field('name', 'STRING', { description: 'Full name' }), field('age', 'INT64')];
    await warehouse.updateTable(ref, { schema: { from: before, to: after }, friendlyName: 'renamed' });

    expect(sent()).toEqual([
      { method: 'GET', path: `${API}/datasets/${dataset}/tables/${table}`, query: {}, body: undefined },
      {
        method: 'PATCH',
        path: `${API}/datasets/${dataset}/tables/${table}`,
        query: {},
        body: {
          friendlyName: 'renamed',
          schema: {
            fields: [
              { name: 'id', type: 'INT64', mode: 'NULLABLE' },
              { name: 'name', type: 'STRING', mode: 'NULLABLE', description: 'Full name' },
              { name: 'age', type: 'INT64', mode: 'NULLABLE' },
            ],
          },
        },
      },
    ]);
    expect(tableOf(ref)?.schema.fields.map((f) => f.name)).toEqual(['id', 'name', 'age']);
  });

  it('sends no schema when only private flags change, and nothing at all when nothing changes', async () => {
    const before = [field('name')];
    const ref = await newTable(before);

    await warehouse.updateTable(ref, { schema: { from: before, to: [field('name', 'STRING', { private: true })] } });
    await warehouse.updateTable(ref, {});

    expect(sent().map((r) => r.method)).toEqual(['GET']);
  });

  it('refuses to drop a column of a table with rows, sending no change', async () => {
    const before = [field('id', 'INT64'), field('name')];
    const ref = await newTable(before);
    tableOf(ref)!.streamingBuffer = { estimatedRows: '3' };

    const error = await caught(warehouse.updateTable(ref, { schema: { from: before, to: [field('id', 'INT64')] } }));

    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toContain('column "name" would be dropped');
    expect(sent().map((r) => r.method)).toEqual(['GET']);
  });

  it('replaces an empty table for a change BigQuery cannot patch, keeping its metadata', async () => {
    const before = [field('id', 'INT64'), field('name')];
    const ref = await newTable(before, { description: 'People', friendlyName: 'people', labels: { tenant: 't1' } });
    const { dataset, table } = physicalNames(ref);

    await warehouse.updateTable(ref, {
      schema: { from: before, to: [field('id', 'STRING', { mode: 'REQUIRED' })] },
      friendlyName: 'renamed',
    });

    expect(sent().map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${API}/datasets/${dataset}/tables/${table}`,
      `DELETE ${API}/datasets/${dataset}/tables/${table}`,
      `POST ${API}/datasets/${dataset}/tables`,
    ]);
    expect(tableOf(ref)).toMatchObject({
      schema: { fields: [{ name: 'id', type: 'STRING', mode: 'REQUIRED' }] },
      description: 'People',
      friendlyName: 'renamed',
      labels: { tenant: 't1' },
    });
  });

  it('counts rows from numRows and the streaming buffer', async () => {
    const ref = await newTable([field('a')]);
    expect(await warehouse.tableRowCount(ref)).toBe(0);
    tableOf(ref)!.numRows = '1000';
    tableOf(ref)!.streamingBuffer = { estimatedRows: '7' };
    expect(await warehouse.tableRowCount(ref)).toBe(1007);
  });

  it('deletes a table, and takes one already gone as deleted', async () => {
    const ref = await newTable([field('a')]);
    await warehouse.deleteTable(ref);
    await warehouse.deleteTable(ref);
    expect(sent().map((r) => r.method)).toEqual(['DELETE', 'DELETE']);
    expect(tableOf(ref)).toBeUndefined();
  });

  it('takes a dataset or table already there (Already Exists) as made, so that a change can be applied again', async () => {
    const ref = await newTable([field('a')]);
    await warehouse.createDataset(ref.datasetId);
    await warehouse.createTable(ref, [field('a')]);
    expect(sent().map((r) => [r.method, r.path])).toEqual([
      ['POST', `${API}/datasets`],
      ['POST', `${API}/datasets/${physicalNames(ref).dataset}/tables`],
    ]);
    expect(tableOf(ref)).toBeDefined();
  });

  it("lists the app's datasets and their tables, every page, and nothing named otherwise", async () => {
    const refs = await Promise.all([newTable([field('a')]), newTable([field('a')])]);
    const [first] = refs;
    const more = Array.from({ length: 4 }, () => ({ datasetId: first.datasetId, tableId: randomUUID() }));
    for (const ref of more) await warehouse.createTable(ref, [field('a')]);
    bigquery.datasets.set('not_ours', {
      datasetReference: { projectId: PROJECT, datasetId: 'not_ours' },
      location: 'EU',
    });
    bigquery.requests.length = 0;

    const listed = await warehouse.listDatasets();
    expect(listed.find((dataset) => dataset.datasetId === first.datasetId)?.tableIds.sort()).toEqual(
      [first.tableId, ...more.map((ref) => ref.tableId)].sort(),
    );
    expect(listed.find((dataset) => dataset.datasetId === refs[1].datasetId)).toEqual({
      datasetId: refs[1].datasetId,
      tableIds: [refs[1].tableId],
    });
    expect(listed.map((dataset) => dataset.datasetId)).not.toContain('not_ours');
    expect(sent().filter((r) => r.query.pageToken !== undefined).length).toBeGreaterThan(0);
    bigquery.datasets.delete('not_ours');
  });

  it("turns BigQuery's error bodies into UpstreamError with its message and reason, naming no physical name", async () => {
    const datasetId = randomUUID();
    await warehouse.createDataset(datasetId);

    const missing = { datasetId: randomUUID(), tableId: randomUUID() };
    expect(await warehouse.tableRowCount(missing)).toBeNull();
    expect(await caught(warehouse.updateTable(missing, { friendlyName: 'x' }))).toMatchObject({
      status: 502,
      code: 'upstream_error',
      message: `BigQuery could not update the table: Not found: Dataset <dataset> (notFound)`,
      details: { status: 404, reason: 'notFound' },
    });

    bigquery.failNext(403, 'accessDenied', 'Access Denied: Dataset collab-test: Permission bigquery.datasets.update denied');
    expect(await caught(warehouse.updateDataset(datasetId, { description: 'x' }))).toMatchObject({
      message:
        'BigQuery could not update the dataset: Access Denied: Dataset collab-test: Permission bigquery.datasets.update denied (accessDenied)',
      details: { status: 403, reason: 'accessDenied' },
    });

    bigquery.failNext(404, 'notFound', 'Not found: Table gone');
    expect(await warehouse.deleteTable({ datasetId, tableId: randomUUID() })).toBeUndefined();
  });

  it('reports an API it cannot reach without naming the address', async () => {
    const unreachable = createBigQueryWarehouse({
      projectId: PROJECT,
      location: 'EU',
      apiEndpoint: `http://127.0.0.1:${await closedPort()}`,
      credentials: 'none',
      autoRetry: false,
    });
    const error = await caught(unreachable.createDataset(randomUUID()));
    expect(error).toEqual(new UpstreamError('BigQuery could not create the dataset: the API could not be reached'));
    expect(error.cause).toBeDefined();
  });
});
