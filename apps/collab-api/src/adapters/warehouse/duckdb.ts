/**
 * The warehouse as one DuckDB database file: a dataset is a DuckDB schema, a table a table.
 *
 * Column descriptions are not kept here: DuckDB sets them one `COMMENT ON COLUMN` at a time, and
 * each of those rewrites the table's catalog entry, so a wide table's descriptions cost time in
 * proportion to columns × described columns (minutes for 10,000). They stay in the app's records.
 * For the same reason every DDL statement here is one per table, or one per column added to a
 * table with rows; operations run one at a time (see transaction), so a statement's cost is also
 * what every other tenant's operation may wait.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { types } from 'node:util';
import { type DuckDBConnection, DuckDBInstance, quotedIdentifier, quotedString } from '@duckdb/node-api';
import { AppError, ConflictError, UpstreamError } from '@repo/errors';
import type {
  LoadRequest,
  LoadResult,
  PreparedLoad,
  TableRef,
  TableUpdate,
  Warehouse,
  WarehouseDataset,
  WarehouseMetadata,
} from './interface.js';
import { CREATE_LOADS_TABLE, findDuckDbLoad, prepareDuckDbLoad } from './load/duckdb.js';
import { idOfPhysicalName, physicalNames, withoutPhysicalNames } from './names.js';
import {
  alterStatements,
  commentText,
  countRows,
  createTable,
  createTableStatement,
  duckDbMessage,
  isOutOfMemory,
  qualifiedName,
  type Sql,
  tableColumns,
  sameColumns,
} from './duckdb-sql.js';
import { type Field, planSchemaChange } from './schema.js';

/** DuckDB's share of the process: its buffer pool's size (DuckDB's syntax, e.g. '256MB') and its threads. */
export interface DuckDbLimits {
  memoryLimit?: string;
  threads?: number;
}

/**
 * Opens (or creates) the database file; its folder is created when missing. The instance comes
 * from DuckDB's per-process cache: a file must be open only once in a process, and other modules
 * (query execution) get their own handle on the same database with `DuckDBInstance.fromCache`.
 * The file closes when the last handle does. `limits` hold for the whole instance, loads and
 * query jobs alike (DuckDB's defaults: 80% of the machine's memory, one thread per core).
 */
export async function openDuckDbWarehouse(file: string, limits: DuckDbLimits = {}): Promise<Warehouse> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    // One cache key per file, however the path was written.
    const instance = await DuckDBInstance.fromCache(path.resolve(file));
    const connection = await instance.connect();
    if (limits.memoryLimit) await connection.run(`SET GLOBAL memory_limit = ${quotedString(limits.memoryLimit)}`);
    if (limits.threads) await connection.run(`SET GLOBAL threads = ${limits.threads}`);
    // Returns memory that queries freed to the system within a second, also while DuckDB is idle,
    // so that the process's memory budget (src/memory) counts what DuckDB holds, not the most it held.
    // The allocator is the process's, and every instance made sets it: the query sandboxes too (SANDBOX).
    await connection.run('SET GLOBAL allocator_background_threads = true');
    // DuckDB's default, set so that nothing turns it off: a scan without ORDER BY answers the rows in
    // the order they were stored, which results pages rely on (query/duckdb.ts, readRows).
    await connection.run('SET GLOBAL preserve_insertion_order = true');
    await connection.run(CREATE_LOADS_TABLE);
    return new DuckDbWarehouse(instance, connection);
  } catch (error) {
    throw toWarehouseError(error);
  }
}

class DuckDbWarehouse implements Warehouse {
  readonly kind = 'duckdb';
  // Mirror operations share one connection and run one at a time, each in a transaction of its
  // own: a DuckDB connection has a single transaction, which interleaved operations would share.
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  // DuckDB cannot comment on a schema, so a dataset keeps no metadata here.
  createDataset(datasetId: string): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    return this.transaction(async (sql) => {
      await sql(`CREATE SCHEMA IF NOT EXISTS ${quotedIdentifier(dataset)}`);
    });
  }

  // Nothing to store (see createDataset), but a missing dataset is reported, not ignored.
  updateDataset(datasetId: string): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    return this.transaction(async (sql) => {
      const found = await sql('SELECT 1 FROM duckdb_schemas() WHERE database_name = current_database() AND schema_name = $1', [
        dataset,
      ]);
      if (found.currentRowCount === 0) throw new UpstreamError('Warehouse error: the dataset does not exist');
    });
  }

  deleteDataset(datasetId: string): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    return this.transaction(async (sql) => {
      await sql(`DROP SCHEMA IF EXISTS ${quotedIdentifier(dataset)} CASCADE`);
    });
  }

  createTable(ref: TableRef, fields: Field[], metadata: WarehouseMetadata = {}): Promise<void> {
    return this.transaction((sql) => createTable(sql, qualifiedName(ref), fields, metadata.description));
  }

  updateTable(ref: TableRef, update: TableUpdate): Promise<void> {
    const table = qualifiedName(ref);
    return this.transaction(async (sql) => {
      const { description } = update;
      // Already so (applied before an interruption, or by a load that replaced the columns): nothing to change.
      if (update.schema && !sameColumns(await tableColumns(sql, ref), update.schema.to)) {
        const tableHasRows = (await countRows(sql, table)) > 0;
        const plan = planSchemaChange(update.schema.from, update.schema.to, { tableHasRows });
        const statements = plan.kind === 'alter' ? alterStatements(table, plan.changes) : [];
        // An empty table is made anew, one CREATE however many columns change, where ALTERs
        // would cost one statement per column; a table with rows keeps them.
        if (plan.kind === 'replace' || (!tableHasRows && statements.length > 0)) {
          // The new table keeps the old one's description unless this update sets another.
          const kept = description === undefined ? await tableComment(sql, ref) : description;
          await sql(`DROP TABLE ${table}`);
          await createTable(sql, table, update.schema.to, kept);
          return;
        }
        if (statements.length > ALTERS_AT_MOST) {
          await rebuildWithRows(sql, ref, update.schema.from, update.schema.to, description);
          return;
        }
        for (const statement of statements) await sql(statement);
      }
      if (description !== undefined) await sql(`COMMENT ON TABLE ${table} IS ${commentText(description)}`);
    });
  }

  deleteTable(ref: TableRef): Promise<void> {
    return this.transaction(async (sql) => {
      await sql(`DROP TABLE IF EXISTS ${qualifiedName(ref)}`);
    });
  }

  tableRowCount(ref: TableRef): Promise<number | null> {
    const { dataset, table } = physicalNames(ref);
    return this.transaction(async (sql) => {
      const found = await sql(
        'SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2',
        [dataset, table],
      );
      return found.currentRowCount === 0 ? null : countRows(sql, qualifiedName(ref));
    });
  }

  /**
   * On a connection of its own (see load/duckdb.ts), so that a long load holds up no other
   * operation; DuckDB's transactions keep the two apart.
   */
  prepareLoad(ref: TableRef, request: LoadRequest): Promise<PreparedLoad> {
    if (this.closed) return Promise.reject(new UpstreamError('Warehouse error: the warehouse is closed'));
    return prepareDuckDbLoad(this.instance, ref, request);
  }

  findLoad(_ref: TableRef, loadId: string): Promise<LoadResult | undefined> {
    return this.transaction(() => findDuckDbLoad(this.connection, loadId));
  }

  listDatasets(): Promise<WarehouseDataset[]> {
    return this.transaction(async (sql) => {
      const reader = await sql(`SELECT s.schema_name, t.table_name
          FROM duckdb_schemas() s LEFT JOIN duckdb_tables() t USING (database_name, schema_name)
         WHERE s.database_name = current_database()`);
      const datasets = new Map<string, WarehouseDataset>();
      for (const [schemaName, tableName] of reader.getRows()) {
        const datasetId = idOfPhysicalName('dataset', String(schemaName));
        if (datasetId === undefined) continue;
        const dataset = datasets.get(datasetId) ?? { datasetId, tableIds: [] };
        datasets.set(datasetId, dataset);
        const tableId = typeof tableName === 'string' ? idOfPhysicalName('table', tableName) : undefined;
        if (tableId !== undefined) dataset.tableIds.push(tableId);
      }
      return [...datasets.values()];
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    this.connection.closeSync();
    this.instance.closeSync();
  }

  /** Runs `work` after every operation queued before it, in a transaction rolled back on failure. */
  private transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new UpstreamError('Warehouse error: the warehouse is closed'));
    const sql: Sql = (text, values) => this.connection.runAndReadAll(text, values);
    const result = this.queue.then(async () => {
      await sql('BEGIN TRANSACTION');
      try {
        const value = await work(sql);
        await sql('COMMIT');
        return value;
      } catch (error) {
        // Leave no transaction open for the next operation; the first error is the one to report.
        await sql('ROLLBACK').catch(() => undefined);
        throw toWarehouseError(error);
      }
    });
    this.queue = result.catch(() => undefined);
    return result;
  }
}

async function tableComment(sql: Sql, ref: TableRef): Promise<string | null> {
  const { dataset, table } = physicalNames(ref);
  const reader = await sql(
    'SELECT comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2',
    [dataset, table],
  );
  const comment = reader.getRows()[0]?.[0];
  return typeof comment === 'string' ? comment : null;
}

// An absolute path, as DuckDB's I/O errors name the database file.
/**
 * Each ALTER of a table with rows copies its catalog entry, every column included: thousands of
 * new columns cost seconds, then minutes (2,000 took 2.6 s, 10,000 over 5 minutes). Past this
 * many statements the table is built anew, rows copied, in time linear in rows × columns.
 */
const ALTERS_AT_MOST = 64;

/**
 * The table with `to`'s columns and its rows, built beside it and renamed into its place, in the
 * caller's transaction (a crash leaves the table as it was). `to` only adds or relaxes columns
 * of `from` (planSchemaChange), so every row fits.
 */
async function rebuildWithRows(
  sql: Sql,
  ref: TableRef,
  from: Field[],
  to: Field[],
  description: string | null | undefined,
): Promise<void> {
  const { dataset, table } = physicalNames(ref);
  const current = qualifiedName(ref);
  const rebuilt = `${quotedIdentifier(dataset)}.${quotedIdentifier(`${table}__rebuilt`)}`;
  const kept = description === undefined ? await tableComment(sql, ref) : description;
  const columns = from.map((field) => quotedIdentifier(field.name)).join(', ');
  await sql(`DROP TABLE IF EXISTS ${rebuilt}`);
  await sql(createTableStatement(rebuilt, to));
  await sql(`INSERT INTO ${rebuilt} (${columns}) SELECT ${columns} FROM ${current}`).catch((error: unknown) => {
    if (!isOutOfMemory(error)) throw error;
    // Each column of a row group holds blocks of its own: the limit is the warehouse's memory, not the API's.
    throw new ConflictError(
      `The warehouse has not the memory for this table's rows in ${to.length} columns (${duckDbMessage(error).split('\n')[0]}): ` +
        'add fewer columns, or raise COLLAB_DUCKDB_MEMORY_LIMIT; the table is unchanged',
    );
  });
  await sql(`DROP TABLE ${current}`);
  await sql(`ALTER TABLE ${rebuilt} RENAME TO ${quotedIdentifier(table)}`);
  if (kept) await sql(`COMMENT ON TABLE ${current} IS ${commentText(kept)}`);
}

const FILE_PATH = /(?<=^|[\s"'(])\/[^\s"']+/g;

/**
 * Errors of this module's own (a refused schema change) pass through; DuckDB's become a 502 with
 * the first line of DuckDB's message, which names the problem without the SQL that follows it,
 * and without physical names or file paths.
 */
function toWarehouseError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  // isNativeError, unlike instanceof, also knows errors made in another realm (jest's sandbox).
  const message = types.isNativeError(error) ? error.message : String(error);
  const reason = withoutPhysicalNames(message.split('\n')[0]!).replace(FILE_PATH, '<file>');
  return new UpstreamError(`Warehouse error: ${reason}`, { cause: error });
}
