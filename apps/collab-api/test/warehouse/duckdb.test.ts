import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { loadConfig } from '@repo/config';
import { ConflictError, UpstreamError } from '@repo/errors';
import { z } from 'zod';
import { openDuckDbWarehouse } from '../../src/adapters/warehouse/duckdb.js';
import {
  checkWarehouseSettings,
  createWarehouse,
  type Field,
  physicalNames,
  type TableRef,
  type Warehouse,
  warehouseSettings,
} from '../../src/adapters/warehouse/index.js';

let dataDir: string;
let file: string;
let warehouse: Warehouse;
// A second handle on the same database, to read DuckDB's catalog as any client would.
let inspector: DuckDBInstance;
let catalog: DuckDBConnection;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'collab-warehouse-'));
  file = path.join(dataDir, 'warehouse', 'warehouse.duckdb');
  const settings = loadConfig(z.object(warehouseSettings()).superRefine(checkWarehouseSettings), {});
  warehouse = await createWarehouse(settings, { dataDir });
  inspector = await DuckDBInstance.fromCache(file);
  catalog = await inspector.connect();
});

afterAll(async () => {
  await warehouse.close();
  catalog.closeSync();
  inspector.closeSync();
  await rm(dataDir, { recursive: true, force: true });
});

async function rows(sql: string, values: string[] = []): Promise<Record<string, unknown>[]> {
  return (await catalog.runAndReadAll(sql, values)).getRowObjectsJS();
}

function field(name: string, type: Field['type'] = 'STRING', extra: Partial<Field> = {}): Field {
  return { name, type, mode: 'NULLABLE', private: false, ...extra };
}

async function columnsOf(ref: TableRef) {
  const { dataset, table } = physicalNames(ref);
  return rows(
    `SELECT column_name AS name, data_type AS type, is_nullable AS nullable, comment
       FROM duckdb_columns() WHERE schema_name = $1 AND table_name = $2 ORDER BY column_index`,
    [dataset, table],
  );
}

async function tablesOf(datasetId: string) {
  return rows('SELECT table_name AS name, comment FROM duckdb_tables() WHERE schema_name = $1 ORDER BY table_name', [
    physicalNames({ datasetId }).dataset,
  ]);
}

async function datasetExists(datasetId: string): Promise<boolean> {
  const found = await rows('SELECT schema_name FROM information_schema.schemata WHERE schema_name = $1', [
    physicalNames({ datasetId }).dataset,
  ]);
  return found.length === 1;
}

async function newDataset(): Promise<string> {
  const datasetId = randomUUID();
  await warehouse.createDataset(datasetId, { description: 'Sales', friendlyName: 'sales' });
  return datasetId;
}

async function insert(ref: TableRef, values: string): Promise<void> {
  const { dataset, table } = physicalNames(ref);
  await catalog.run(`INSERT INTO ${dataset}.${table} VALUES ${values}`);
}

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the operation to fail');
}

describe('DuckDB warehouse', () => {
  it('is the default, in <DATA_DIR>/warehouse/warehouse.duckdb', async () => {
    expect(warehouse.kind).toBe('duckdb');
    expect((await stat(file)).isFile()).toBe(true);
  });

  it('creates a dataset as a schema and deletes it with its tables', async () => {
    const datasetId = await newDataset();
    expect(await datasetExists(datasetId)).toBe(true);
    await warehouse.createTable({ datasetId, tableId: randomUUID() }, [field('a')]);

    await warehouse.deleteDataset(datasetId);
    expect(await datasetExists(datasetId)).toBe(false);
    expect(await tablesOf(datasetId)).toEqual([]);
    await warehouse.deleteDataset(datasetId);
  });

  it('maps every column type and mode, and keeps the table description (column descriptions stay in the records)', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    await warehouse.createTable(
      ref,
      [
        field('s', 'STRING', { mode: 'REQUIRED', description: "Customer's name" }),
        field('i', 'INT64'),
        field('f', 'FLOAT64'),
        field('n', 'NUMERIC'),
        field('b', 'BOOL'),
        field('d', 'DATE'),
        field('dt', 'DATETIME'),
        field('ts', 'TIMESTAMP'),
        field('t', 'TIME'),
        field('by', 'BYTES'),
        field('j', 'JSON'),
        field('tags', 'STRING', { mode: 'REPEATED', private: true }),
      ],
      { description: 'Orders', friendlyName: 'orders' },
    );

    expect(await tablesOf(ref.datasetId)).toEqual([{ name: physicalNames(ref).table, comment: 'Orders' }]);
    expect(await columnsOf(ref)).toEqual([
      { name: 's', type: 'VARCHAR', nullable: false, comment: null },
      { name: 'i', type: 'BIGINT', nullable: true, comment: null },
      { name: 'f', type: 'DOUBLE', nullable: true, comment: null },
      { name: 'n', type: 'DECIMAL(38,9)', nullable: true, comment: null },
      { name: 'b', type: 'BOOLEAN', nullable: true, comment: null },
      { name: 'd', type: 'DATE', nullable: true, comment: null },
      { name: 'dt', type: 'TIMESTAMP', nullable: true, comment: null },
      { name: 'ts', type: 'TIMESTAMP WITH TIME ZONE', nullable: true, comment: null },
      { name: 't', type: 'TIME', nullable: true, comment: null },
      { name: 'by', type: 'BLOB', nullable: true, comment: null },
      { name: 'j', type: 'JSON', nullable: true, comment: null },
      { name: 'tags', type: 'VARCHAR[]', nullable: true, comment: null },
    ]);
  });

  it('renames in metadata only: the physical names stay', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    await warehouse.createTable(ref, [field('a')], { description: 'Before' });
    await insert(ref, "('kept')");

    await warehouse.updateDataset(ref.datasetId, { friendlyName: 'renamed', description: 'New' });
    await warehouse.updateTable(ref, { friendlyName: 'renamed', description: 'After' });

    expect(await tablesOf(ref.datasetId)).toEqual([{ name: physicalNames(ref).table, comment: 'After' }]);
    expect(await rows(`SELECT a FROM ${physicalNames(ref).dataset}.${physicalNames(ref).table}`)).toEqual([{ a: 'kept' }]);
  });

  it('adds columns and relaxes modes of a table with rows, keeping its data', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    const before = [field('id', 'INT64', { mode: 'REQUIRED' }), field('name', 'STRING', { description: 'Name' })];
    await warehouse.createTable(ref, before);
    await insert(ref, "(1, 'Ada'), (2, 'Grace')");

    const after = [
      field('id', 'INT64'),
      field('name', 'STRING', { description: 'Full name', private: true }),
      field('scores', 'FLOAT64', { mode: 'REPEATED', description: 'Test scores' }),
    ];
    await warehouse.updateTable(ref, { schema: { from: before, to: after } });

    expect(await columnsOf(ref)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: true, comment: null },
      { name: 'name', type: 'VARCHAR', nullable: true, comment: null },
      { name: 'scores', type: 'DOUBLE[]', nullable: true, comment: null },
    ]);
    const { dataset, table } = physicalNames(ref);
    expect(await rows(`SELECT * FROM ${dataset}.${table} ORDER BY id`)).toEqual([
      { id: 1n, name: 'Ada', scores: null },
      { id: 2n, name: 'Grace', scores: null },
    ]);
    expect(await warehouse.tableRowCount(ref)).toBe(2);
  });

  it('refuses to drop or retype a column of a table with rows, changing nothing', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    const before = [field('id', 'INT64'), field('name')];
    await warehouse.createTable(ref, before);
    await insert(ref, "(1, 'Ada')");

    const error = await caught(
      warehouse.updateTable(ref, { schema: { from: before, to: [field('id', 'STRING')] }, description: 'Not applied' }),
    );

    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toContain('column "name" would be dropped; column "id" would change type from INT64 to STRING');
    expect(await columnsOf(ref)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: true, comment: null },
      { name: 'name', type: 'VARCHAR', nullable: true, comment: null },
    ]);
    expect(await tablesOf(ref.datasetId)).toEqual([{ name: physicalNames(ref).table, comment: null }]);
  });

  it('replaces an empty table for changes that need it, keeping its description', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    const before = [field('id', 'INT64'), field('name')];
    await warehouse.createTable(ref, before, { description: 'People' });

    const after = [field('name', 'STRING', { mode: 'REQUIRED' }), field('id', 'STRING')];
    await warehouse.updateTable(ref, { schema: { from: before, to: after } });

    expect(await columnsOf(ref)).toEqual([
      { name: 'name', type: 'VARCHAR', nullable: false, comment: null },
      { name: 'id', type: 'VARCHAR', nullable: true, comment: null },
    ]);
    expect(await tablesOf(ref.datasetId)).toEqual([{ name: physicalNames(ref).table, comment: 'People' }]);
  });

  it('counts rows and deletes tables', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    await warehouse.createTable(ref, [field('a')]);
    expect(await warehouse.tableRowCount(ref)).toBe(0);
    await insert(ref, "('x'), ('y'), (NULL)");
    expect(await warehouse.tableRowCount(ref)).toBe(3);

    await warehouse.deleteTable(ref);
    expect(await tablesOf(ref.datasetId)).toEqual([]);
    await warehouse.deleteTable(ref);
  });

  it('runs concurrent operations one after another', async () => {
    const datasetId = await newDataset();
    const tableIds = Array.from({ length: 8 }, () => randomUUID());
    await Promise.all(tableIds.map((tableId, i) => warehouse.createTable({ datasetId, tableId }, [field(`c${i}`)])));
    expect(await tablesOf(datasetId)).toHaveLength(8);
  });

  it('takes what is already made as made, so that a change can be applied again after an interruption', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    await warehouse.createDataset(ref.datasetId);
    const before = [field('id', 'INT64', { mode: 'REQUIRED' })];
    await warehouse.createTable(ref, before);
    await warehouse.createTable(ref, before);
    await insert(ref, '(1)');
    const change = { schema: { from: before, to: [field('id', 'INT64'), field('note')] } };
    await warehouse.updateTable(ref, change);
    await warehouse.updateTable(ref, change);
    expect(await columnsOf(ref)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: true, comment: null },
      { name: 'note', type: 'VARCHAR', nullable: true, comment: null },
    ]);
    expect(await tablesOf(ref.datasetId)).toHaveLength(1);
  });

  it('makes an empty table anew for a change of its columns, however many (10,000 here)', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    const before = [field('id', 'INT64', { mode: 'REQUIRED' })];
    await warehouse.createTable(ref, before, { description: 'Wide' });
    const wide = [field('id', 'INT64'), ...Array.from({ length: 9_999 }, (_, i) => field(`c${i}`))];
    await warehouse.updateTable(ref, { schema: { from: before, to: wide } });
    const columns = await columnsOf(ref);
    expect(columns).toHaveLength(10_000);
    expect(columns.slice(0, 2)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: true, comment: null },
      { name: 'c0', type: 'VARCHAR', nullable: true, comment: null },
    ]);
    expect(await tablesOf(ref.datasetId)).toEqual([{ name: physicalNames(ref).table, comment: 'Wide' }]);
  });

  it('builds a table with rows anew for many new columns (1,000 here), keeping its rows, modes and description', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    const before = [field('id', 'INT64', { mode: 'REQUIRED' }), field('name', 'STRING', { mode: 'REQUIRED' })];
    await warehouse.createTable(ref, before, { description: 'Wide with rows' });
    await insert(ref, "(1, 'Ada'), (2, 'Grace')");
    const wide = [
      field('id', 'INT64', { mode: 'REQUIRED' }),
      field('name'),
      ...Array.from({ length: 998 }, (_, i) => field(`c${i}`)),
    ];
    await warehouse.updateTable(ref, { schema: { from: before, to: wide } });

    const columns = await columnsOf(ref);
    expect(columns).toHaveLength(1_000);
    expect(columns.slice(0, 3)).toEqual([
      { name: 'id', type: 'BIGINT', nullable: false, comment: null },
      { name: 'name', type: 'VARCHAR', nullable: true, comment: null },
      { name: 'c0', type: 'VARCHAR', nullable: true, comment: null },
    ]);
    const { dataset, table } = physicalNames(ref);
    expect(await rows(`SELECT id, name, c0, c997 FROM ${dataset}.${table} ORDER BY id`)).toEqual([
      { id: 1n, name: 'Ada', c0: null, c997: null },
      { id: 2n, name: 'Grace', c0: null, c997: null },
    ]);
    // Only the table: the one it was built as is renamed into its place.
    expect(await tablesOf(ref.datasetId)).toEqual([{ name: table, comment: 'Wide with rows' }]);
    // Applied again (after an interruption): already so.
    await warehouse.updateTable(ref, { schema: { from: before, to: wide } });
    expect(await warehouse.tableRowCount(ref)).toBe(2);
  });

  it('refuses (409, the table unchanged) new columns whose rows the warehouse has not the memory for', async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    const before = [field('id', 'INT64')];
    await warehouse.createTable(ref, before);
    await insert(ref, '(1)');
    const wide = [field('id', 'INT64'), ...Array.from({ length: 9_999 }, (_, i) => field(`c${i}`, 'INT64'))];
    const error = await caught(warehouse.updateTable(ref, { schema: { from: before, to: wide } }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toMatch(/not the memory for this table's rows in 10000 columns .*raise COLLAB_DUCKDB_MEMORY_LIMIT/);
    expect(await columnsOf(ref)).toHaveLength(1);
    expect(await warehouse.tableRowCount(ref)).toBe(1);
    expect(await tablesOf(ref.datasetId)).toEqual([{ name: physicalNames(ref).table, comment: null }]);
  });

  it("lists the app's datasets with their tables, and nothing named otherwise", async () => {
    const ref = { datasetId: await newDataset(), tableId: randomUUID() };
    await warehouse.createTable(ref, [field('a')]);
    const empty = await newDataset();
    await catalog.run('CREATE SCHEMA IF NOT EXISTS not_ours; CREATE TABLE IF NOT EXISTS not_ours.t (a INT)');
    await catalog.run(`CREATE TABLE ${physicalNames(ref).dataset}.notes (a INT)`);

    const listed = await warehouse.listDatasets();
    expect(listed).toEqual(
      expect.arrayContaining([
        { datasetId: ref.datasetId, tableIds: [ref.tableId] },
        { datasetId: empty, tableIds: [] },
      ]),
    );
    expect(listed.every(({ datasetId }) => /^[0-9a-f-]{36}$/.test(datasetId))).toBe(true);
  });

  it('reports DuckDB failures as UpstreamError with the first line of the reason, naming no physical name, and goes on working', async () => {
    const missing = { datasetId: randomUUID(), tableId: randomUUID() };
    const error = await caught(warehouse.createTable(missing, [field('a')]));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(error.message).toBe('Warehouse error: Catalog Error: Schema with name <dataset> does not exist!');
    expect(await warehouse.tableRowCount(missing)).toBeNull();
    expect(await caught(warehouse.updateDataset(missing.datasetId, { description: 'x' }))).toEqual(
      new UpstreamError('Warehouse error: the dataset does not exist'),
    );

    const datasetId = await newDataset();

    const ref = { datasetId, tableId: randomUUID() };
    await warehouse.createTable(ref, [field('a')]);
    expect(await warehouse.tableRowCount(ref)).toBe(0);
  });

  it("caps DuckDB's memory at COLLAB_DUCKDB_MEMORY_LIMIT, for every connection", async () => {
    const reader = await catalog.runAndReadAll(`SELECT current_setting('memory_limit') AS limit`);
    expect(reader.getRowObjectsJS()).toEqual([{ limit: '244.1 MiB' }]);
  });

  it('names no file path in its errors', async () => {
    const notAFile = path.join(dataDir, 'a-folder.duckdb');
    await mkdir(notAFile);
    const error = await caught(openDuckDbWarehouse(notAFile));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.message).toBe('Warehouse error: IO Error: Could not read from file "<file>": Is a directory');
  });

  it('keeps everything in the file after closing, and refuses work once closed', async () => {
    const own = path.join(dataDir, 'reopen', 'w.duckdb');
    const first = await openDuckDbWarehouse(own);
    const ref = { datasetId: randomUUID(), tableId: randomUUID() };
    await first.createDataset(ref.datasetId);
    await first.createTable(ref, [field('a')]);
    await first.close();
    expect(await caught(first.tableRowCount(ref))).toEqual(new UpstreamError('Warehouse error: the warehouse is closed'));

    const second = await openDuckDbWarehouse(own);
    expect(await second.tableRowCount(ref)).toBe(0);
    await second.close();
  });
});
