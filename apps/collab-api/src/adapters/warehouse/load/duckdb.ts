/**
 * Loads into the DuckDB warehouse, all or nothing: on a connection of its own, in one DuckDB
 * transaction, the file is staged as text (each format's reader), checked against the columns
 * (rules.ts), and only then written into the table, with the columns autodetect found and the
 * disposition's replace or check; the transaction also records the load id, so that a load is
 * never done twice (findLoad). Nothing is visible until it commits; an interrupted one leaves
 * the table as it was. A CSV file into a table with known columns goes the fast way first,
 * straight into the table with its values checked as DuckDB reads them (insertedFast); only a file
 * that way refuses is staged, to list its problems.
 */
import { stat } from 'node:fs/promises';
import { type DuckDBConnection, type DuckDBInstance, quotedString } from '@duckdb/node-api';
import { ConflictError } from '@repo/errors';
import {
  alterStatements,
  countRows,
  createTableStatement,
  qualifiedName,
  sameColumns,
  type Sql,
  tableColumns,
} from '../duckdb-sql.js';
import type { LoadRequest, LoadResult, PreparedLoad, SourceFormat, TableRef } from '../interface.js';
import { type Field, planSchemaChange } from '../schema.js';
import { readAvro } from './avro.js';
import { insertCsv, readCsv } from './csv.js';
import { readJson } from './json.js';
import { readParquet } from './parquet.js';
import { LoadFailure, problemsFailure } from './problems.js';
import { acceptable, columnValue, inferredModes, keepingNullable, refusal, stagedColumn } from './rules.js';
import { outOfMemory, type Reader, rowsOf } from './staging.js';

const READERS: Record<Exclude<SourceFormat, 'ORC'>, Reader> = {
  CSV: readCsv,
  JSON: readJson,
  AVRO: readAvro,
  PARQUET: readParquet,
};

/** Loads done, by load id: written in each load's transaction. In `main`, where no dataset of the app lives. */
export const LOADS_TABLE = 'main.collab_loads';

export const CREATE_LOADS_TABLE = `CREATE TABLE IF NOT EXISTS ${LOADS_TABLE} (
  load_id UUID PRIMARY KEY, rows_loaded BIGINT NOT NULL, bytes_processed BIGINT NOT NULL, loaded_at TIMESTAMPTZ NOT NULL)`;

export async function prepareDuckDbLoad(instance: DuckDBInstance, ref: TableRef, request: LoadRequest): Promise<PreparedLoad> {
  if (request.format === 'ORC') {
    throw new LoadFailure(
      'ORC needs the BigQuery warehouse: DuckDB has no ORC reader. Convert the file to Parquet, or run with COLLAB_WAREHOUSE=bigquery.',
    );
  }
  const connection = await instance.connect();
  const sql: Sql = (text, values) => connection.runAndReadAll(text, values);
  // Interrupting stops the statement under way; the transaction is then rolled back.
  const interrupt = () => connection.interrupt();
  request.signal.addEventListener('abort', interrupt, { once: true });
  const release = async (rollback: boolean) => {
    request.signal.removeEventListener('abort', interrupt);
    if (rollback) await sql('ROLLBACK').catch(() => undefined);
    connection.closeSync();
  };
  try {
    await sql('BEGIN TRANSACTION');
    const file = await request.source.localFile();
    const bytes = (await stat(file)).size;
    const prepared = (fields: Field[], write: () => Promise<number>): PreparedLoad => ({
      fields,
      async commit(): Promise<LoadResult> {
        let rowsLoaded;
        try {
          rowsLoaded = await write();
          await sql(`INSERT INTO ${LOADS_TABLE} VALUES ($1::UUID, $2, $3, now())`, [request.loadId, rowsLoaded, bytes]);
          await sql('COMMIT');
        } catch (error) {
          await release(true);
          throw outOfMemory(error);
        }
        await release(false);
        return { rowsLoaded, bytesProcessed: bytes, fields };
      },
      abort: () => release(true),
    });
    const inserted = await insertedFast(sql, ref, request, file);
    if (inserted !== undefined) return prepared(request.fields, () => Promise.resolve(inserted));
    const staged = await READERS[request.format](sql, file, {
      fields: request.autodetect ? undefined : request.fields,
      csvHeader: request.csvHeader,
    });
    const rows = await countRows(sql, qualifiedName(ref));
    const keepsRows = rows > 0 && request.disposition === 'WRITE_APPEND';
    const checked = await checkValues(sql, staged.fields, request.autodetect && !staged.declaredModes);
    const fields = request.autodetect && keepsRows ? keepingNullable(checked, request.fields) : checked;
    const statements = await tableStatements(sql, ref, request, fields, rows);
    return prepared(fields, async () => {
      for (const statement of statements) await sql(statement);
      const columns = fields.map(stagedColumn).join(', ');
      const values = fields.map((field) => columnValue(field, stagedColumn(field))).join(', ');
      const inserted = await sql(`INSERT INTO ${qualifiedName(ref)} (${columns}) SELECT ${values} FROM staged`);
      return Number(inserted.getRows()[0]?.[0] ?? 0);
    });
  } catch (error) {
    await release(true);
    throw outOfMemory(error);
  }
}

/**
 * A CSV file into a table with known columns, the fast way (insertCsv): straight into the table,
 * in this transaction, after the disposition's statements. On any failure the transaction is
 * rolled back and begun anew for the staged way, which reports the failure as it always has (the
 * problems with their rows), or loads the file when only the typed reading refused it. Answers
 * the rows inserted, or undefined when the staged way is to go.
 */
async function insertedFast(sql: Sql, ref: TableRef, request: LoadRequest, file: string): Promise<number | undefined> {
  if (request.format !== 'CSV' || request.autodetect) return undefined;
  try {
    const rows = await countRows(sql, qualifiedName(ref));
    for (const statement of await tableStatements(sql, ref, request, request.fields, rows)) await sql(statement);
    return await insertCsv(sql, file, qualifiedName(ref), { fields: request.fields, csvHeader: request.csvHeader });
  } catch (error) {
    if (request.signal.aborted) throw error;
    await sql('ROLLBACK');
    await sql('BEGIN TRANSACTION');
    return undefined;
  }
}

/** A committed load's outcome, from the row its transaction wrote. */
export async function findDuckDbLoad(connection: DuckDBConnection, loadId: string): Promise<LoadResult | undefined> {
  const reader = await connection.runAndReadAll(
    `SELECT rows_loaded, bytes_processed FROM ${LOADS_TABLE} WHERE load_id = $1::UUID`,
    [loadId],
  );
  const row = reader.getRows()[0];
  return row && { rowsLoaded: Number(row[0]), bytesProcessed: Number(row[1]) };
}

/**
 * Columns a statement of checkValues checks at most: DuckDB's time to bind and plan one statement
 * grows faster than its columns (a one-row file: 1,000 columns in one statement 2.6 s, in statements
 * of 100 0.4 s; 3,000 took 50 s).
 */
const CHECKED_PER_STATEMENT = 100;

/**
 * Checks every staged value against its column, in passes (CHECKED_PER_STATEMENT columns each)
 * that also count the missing values of each column (from which `inferModes` decides the modes);
 * throws the first problems in file order, and how many there are, when any value does not fit.
 * Answers the columns.
 */
async function checkValues(sql: Sql, staged: Field[], inferModes: boolean): Promise<Field[]> {
  let rows = 0;
  const nulls: number[] = [];
  const bad: number[] = [];
  for (let start = 0; start < staged.length; start += CHECKED_PER_STATEMENT) {
    const part = staged.slice(start, start + CHECKED_PER_STATEMENT);
    const measures = part.flatMap((field, i) => [
      `count(*) FILTER (WHERE ${stagedColumn(field)} IS NULL)::BIGINT AS n${i}`,
      `count(*) FILTER (WHERE NOT ${acceptable(field, stagedColumn(field))})::BIGINT AS b${i}`,
    ]);
    const [counts] = await rowsOf(sql, `SELECT count(*)::BIGINT AS rows, ${measures.join(', ')} FROM staged`);
    rows = Number(counts!.rows);
    part.forEach((_, i) => {
      nulls.push(Number(counts![`n${i}`]));
      bad.push(Number(counts![`b${i}`]));
    });
  }
  const fields = inferModes ? inferredModes(staged, nulls, rows) : staged;
  const problemCount = bad.reduce((sum, count) => sum + count, 0);
  if (problemCount === 0) return fields;
  // The first ten problems in file order: the first ten of each pass's columns, then of them all.
  const first: { row: number; column: string; reason: string }[] = [];
  for (let start = 0; start < fields.length; start += CHECKED_PER_STATEMENT) {
    const failing = fields.slice(start, start + CHECKED_PER_STATEMENT).filter((_, i) => bad[start + i]! > 0);
    if (failing.length === 0) continue;
    const problems = failing
      .map(
        (field) =>
          `SELECT row_no, ${quotedString(field.name)} AS name, ${refusal(field, stagedColumn(field))} AS reason
             FROM staged WHERE NOT ${acceptable(field, stagedColumn(field))}`,
      )
      .join(' UNION ALL ');
    const found = await rowsOf(sql, `SELECT * FROM (${problems}) ORDER BY row_no, name LIMIT 10`);
    first.push(...found.map((row) => ({ row: Number(row.row_no), column: String(row.name), reason: String(row.reason) })));
  }
  first.sort((a, b) => a.row - b.row || (a.column < b.column ? -1 : a.column > b.column ? 1 : 0));
  throw problemsFailure(first.slice(0, 10), problemCount);
}

/**
 * What the table needs before the rows go in: emptied (WRITE_TRUNCATE), checked empty
 * (WRITE_EMPTY), and with autodetect given the found columns: made anew when it ends up empty,
 * else changed in place as its rows allow (planSchemaChange; refused otherwise).
 */
async function tableStatements(sql: Sql, ref: TableRef, request: LoadRequest, fields: Field[], rows: number): Promise<string[]> {
  const table = qualifiedName(ref);
  if (request.disposition === 'WRITE_EMPTY' && rows > 0) {
    throw new LoadFailure(`The table has ${rows} rows and the write disposition is WRITE_EMPTY: nothing was loaded`);
  }
  const keepsRows = rows > 0 && request.disposition === 'WRITE_APPEND';
  if (!request.autodetect || sameColumns(await tableColumns(sql, ref), fields)) {
    return request.disposition === 'WRITE_TRUNCATE' ? [`DELETE FROM ${table}`] : [];
  }
  if (!keepsRows) return [`DROP TABLE ${table}`, createTableStatement(table, fields)];
  try {
    const plan = planSchemaChange(request.fields, fields, { tableHasRows: true });
    return plan.kind === 'alter' ? alterStatements(table, plan.changes) : [];
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    throw new LoadFailure(
      `Autodetect found other columns than the table's, and the table keeps its rows (WRITE_APPEND): ${error.message} Load with WRITE_TRUNCATE to replace the rows and the columns.`,
    );
  }
}
