/**
 * Query jobs on the DuckDB warehouse. A query is parsed, checked, printed back and planned in the
 * sandbox (sandbox.ts), and only the printed SQL runs: on a connection of its own on the
 * warehouse, inside the statement that stores its result. The result is a table of its own in the
 * schema `collab_results` (no dataset of the app is named so), in the result's order, masked
 * columns already null, so that page N is a rowid range read (zone maps skip the rest) and exports
 * read the same rows. A job that reads a masked table fails with DuckDB's error class and position
 * only (failures.ts).
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createDeflate } from 'node:zlib';
import {
  DuckDBArrayType,
  type DuckDBConnection,
  DuckDBInstance,
  DuckDBListType,
  DuckDBMapType,
  DuckDBStructType,
  type DuckDBType,
  quotedIdentifier,
  quotedString,
} from '@duckdb/node-api';
import { UpstreamError } from '@repo/errors';
import avsc from 'avsc';
import { duckDbMessage, isOutOfMemory } from '../duckdb-sql.js';
import { CREATE_LOADS_TABLE } from '../load/duckdb.js';
import { withoutPhysicalNames } from '../names.js';
import { QueryRefused, type ReadableCatalog } from './analyze.js';
import { errorClass, withheldMessage } from './failures.js';
import { billedBytes, bytesBilledRefusal } from './billing.js';
import { ColumnBytes } from './duckdb-bytes.js';
import type {
  ExportCompression,
  ExportFormat,
  QueryEngine,
  QueryEstimate,
  QueryOutcome,
  QueryRequest,
  QueryUsage,
  ResultColumn,
} from './interface.js';
import { QueryFailure } from './interface.js';
import { googleSqlTypeOfDuckDb } from './result-types.js';
import { bigLong } from '../avro-long.js';
import { type CheckedQuery, resultPrivacy, type Sandbox } from './sandbox.js';
import { CHECK_CACHE, rememberingChecks } from './check-cache.js';
import { openSandboxThread } from './sandbox-thread.js';

const RESULTS_SCHEMA = 'collab_results';

/** A result column as DuckDB binds it: its name and type. */
type BoundColumn = { name: string; type: string };

/** What one query may build: its stored result's rows, and the values of a list built from constants (limits.ts). */
export interface DuckDbQueryLimits {
  maxResultRows: number;
  maxConstantListElements: number;
}

/** The engine on the warehouse file that `openDuckDbWarehouse` opened (the same cached instance). */
export async function openDuckDbQueryEngine(file: string, limits: DuckDbQueryLimits): Promise<QueryEngine> {
  const warehouse = await DuckDBInstance.fromCache(file);
  const connection = await warehouse.connect();
  try {
    await connection.run(`CREATE SCHEMA IF NOT EXISTS ${RESULTS_SCHEMA}`);
    // The loads' record, which tells whether a table changed since its columns were measured (duckdb-bytes.ts).
    await connection.run(CREATE_LOADS_TABLE);
  } finally {
    connection.closeSync();
  }
  return new DuckDbQueryEngine(warehouse, rememberingChecks(await openSandboxThread(), CHECK_CACHE), limits);
}

class DuckDbQueryEngine implements QueryEngine {
  private readonly columnBytes = new ColumnBytes();
  /** The result columns of the checks made (boundColumns); let go with the check. */
  private readonly bound = new WeakMap<CheckedQuery, BoundColumn[]>();

  constructor(
    private readonly warehouse: DuckDBInstance,
    private readonly sandbox: Sandbox,
    private readonly limits: DuckDbQueryLimits,
  ) {}

  async run(request: QueryRequest): Promise<QueryOutcome> {
    const checked = await this.check(request.sql, request.catalog, request.onTables);
    if (request.signal.aborted) throw new QueryFailure('stopped', 'The job was stopped before it started');
    // The bytes read do not depend on the result: counted on a connection of their own while the query runs,
    // or first, when a limit on the bytes billed must refuse the query before it runs (as BigQuery does).
    const usage = measuredUsage(this.warehouse, this.columnBytes, request.catalog, checked);
    usage.catch(() => undefined);
    if (request.maximumBytesBilled !== undefined) {
      const refusal = bytesBilledRefusal((await usage).bytesBilled, request.maximumBytesBilled);
      if (refusal) throw new QueryFailure('bytesBilledLimitExceeded', refusal);
    }
    const connection = await this.warehouse.connect();
    // A stop that came while the bytes were counted or the connection opened: an abort listener added
    // now would never hear it, and the query would run to its timeout.
    if (request.signal.aborted) {
      connection.closeSync();
      throw new QueryFailure('stopped', 'The job was stopped before it started');
    }
    const interrupt = () => connection.interrupt();
    request.signal.addEventListener('abort', interrupt, { once: true });
    try {
      return await this.store(connection, request, checked, usage);
    } catch (error) {
      // BigQuery bills a cancelled job for what it read; DuckDB cannot tell how far it got: all of it.
      if (request.signal.aborted) {
        throw new QueryFailure('stopped', 'The job was stopped before it finished', await usage.catch(() => undefined));
      }
      throw outOfMemory(error) ?? failure(error);
    } finally {
      request.signal.removeEventListener('abort', interrupt);
      connection.closeSync();
    }
  }

  async dryRun(request: Pick<QueryRequest, 'sql' | 'catalog' | 'signal'>): Promise<QueryEstimate> {
    const checked = await this.check(request.sql, request.catalog);
    if (request.signal.aborted) throw new QueryFailure('stopped', 'The dry run was stopped');
    return {
      ...(await measuredUsage(this.warehouse, this.columnBytes, request.catalog, checked)),
      referenced: checked.referenced,
    };
  }

  async readRows(
    jobId: string,
    columns: ResultColumn[],
    range: { offset: number; limit: number },
  ): Promise<Record<string, unknown>[]> {
    const connection = await this.warehouse.connect();
    try {
      // In rowid order without ORDER BY, whose sort cost a small page about a third of its time: a
      // result table is written once, and a scan keeps the stored order (preserve_insertion_order, ../duckdb.ts).
      const reader = await connection.runAndReadAll(
        `SELECT ${storedColumns(columns)} FROM ${resultTable(jobId)}
          WHERE rowid >= ${Math.trunc(range.offset)} AND rowid < ${Math.trunc(range.offset + range.limit)}`,
      );
      return reader
        .getRowsJson()
        .map((row) => Object.fromEntries(columns.map((column, i) => [column.name, jsonValue(row[i], column.type)])));
    } catch (error) {
      // An API answer: the warehouse's 502, DuckDB's own message (which names the result table) kept as the cause.
      throw new UpstreamError('Warehouse error: the stored result of this job cannot be read', { cause: error });
    } finally {
      connection.closeSync();
    }
  }

  resultSchema(columns: ResultColumn[]): { name: string; type: string }[] {
    return columns.map((column) => ({ name: column.name, type: googleSqlTypeOfDuckDb(column.type) }));
  }

  async dropResult(jobId: string): Promise<void> {
    const connection = await this.warehouse.connect();
    try {
      await connection.run(`DROP TABLE IF EXISTS ${resultTable(jobId)}`);
    } finally {
      connection.closeSync();
    }
  }

  async exportResult(
    jobId: string,
    columns: ResultColumn[],
    options: { format: ExportFormat; compression: ExportCompression; file: string },
  ): Promise<'local-file'> {
    const connection = await this.warehouse.connect();
    const select = `SELECT ${columns.map((column, i) => `c${i} AS ${quotedIdentifier(column.name)}`).join(', ')}
      FROM ${resultTable(jobId)} ORDER BY rowid`;
    try {
      if (options.format === 'AVRO') {
        await writeAvro(connection, select, columns, options);
        return 'local-file';
      }
      // DuckDB compresses CSV and JSON with gzip; DEFLATE is zlib's stream over the plain file.
      const deflate = options.compression === 'DEFLATE' && options.format !== 'PARQUET';
      const target = deflate ? `${options.file}.plain` : options.file;
      await connection.run(`COPY (${select}) TO ${quotedString(target)} (${copyOptions(options.format, options.compression)})`);
      if (deflate) {
        await pipeline(createReadStream(target), createDeflate(), createWriteStream(options.file));
        await rm(target, { force: true });
      }
      return 'local-file';
    } catch (error) {
      throw failure(error);
    } finally {
      connection.closeSync();
    }
  }

  close(): Promise<void> {
    return this.sandbox.close();
  }

  /**
   * Parses, checks and prints back the SQL that will run, and follows its columns (sandbox.ts);
   * `onTables` hears the tables it references before an analysis rule refuses it, and those it
   * names when the check itself refuses or fails it (a function not allowed, a column unknown).
   */
  private async check(sql: string, catalog: ReadableCatalog, onTables?: QueryRequest['onTables']): Promise<CheckedQuery> {
    let checked: CheckedQuery;
    try {
      // Lists built from constants are counted before DuckDB plans (and so folds) them.
      checked = await this.sandbox.check(sql, catalog, { maxListElements: this.limits.maxConstantListElements });
    } catch (error) {
      if (onTables) await onTables(await this.sandbox.namedTables(sql, catalog));
      if (error instanceof QueryRefused) throw new QueryFailure('accessDenied', scrubbed(error.message));
      throw failure(error);
    }
    await onTables?.(checked.referenced);
    if (checked.refusal) throw new QueryFailure('accessDenied', checked.refusal);
    return checked;
  }

  /**
   * The failure of a statement that ran `checked`: when it reads a masked table or one with an
   * aggregation rule, its class and where it points in the caller's text only, as DuckDB's message
   * may carry the value it failed on (a row's, or a group's the threshold drops).
   */
  private async failed(error: unknown, checked: CheckedQuery, statement: string): Promise<never> {
    if (!checked.readsMaskedTable && !checked.threshold) throw error;
    // DuckDB's allocation failure names sizes only.
    const outOfBudget = outOfMemory(error);
    if (outOfBudget) throw outOfBudget;
    const message = duckDbMessage(error);
    const position = await this.sandbox.locate(checked, statement, message).catch(() => undefined);
    throw new QueryFailure('invalidQuery', withheldMessage(errorClass(message), position));
  }

  /**
   * The result's columns as DuckDB binds `checked.sql`, prepared once per check: a check is made
   * of the text and the catalog (tables, columns and their types), which decide them, and a check
   * remembered (check-cache.ts) is the same object, so a query run again is not prepared again.
   */
  private async boundColumns(connection: DuckDBConnection, checked: CheckedQuery): Promise<BoundColumn[]> {
    let columns = this.bound.get(checked);
    if (!columns) {
      const prepared = await connection.prepare(checked.sql);
      columns = Array.from({ length: prepared.columnCount }, (_, i) => ({
        name: prepared.columnName(i),
        type: typeText(prepared.columnType(i)),
      }));
      this.bound.set(checked, columns);
    }
    return columns;
  }

  private async store(
    connection: DuckDBConnection,
    request: QueryRequest,
    checked: CheckedQuery,
    usage: Promise<QueryUsage>,
  ): Promise<QueryOutcome> {
    const bound = await this.boundColumns(connection, checked);
    const masked = resultPrivacy(checked, bound.length);
    const columns: ResultColumn[] = uniqueNames(bound.map((column) => column.name)).map((name, i) => ({
      name,
      type: bound[i]!.type,
      private: masked[i]!,
    }));
    const aliases = columns.map((_, i) => `c${i}`).join(', ');
    const projections = columns.map((column, i) => (column.private ? `CASE WHEN false THEN c${i} END AS c${i}` : `c${i}`));
    const maskedValues = columns.flatMap((column, i) => (column.private ? [`c${i} IS NOT NULL`] : []));
    if (maskedValues.length > 0) projections.push(`(${maskedValues.join(' OR ')}) AS masked_row`);
    // One row past the limit tells a result over it, without storing the rest.
    const maxRows = this.limits.maxResultRows;
    const statement = `CREATE OR REPLACE TABLE ${resultTable(request.jobId)} AS SELECT ${projections.join(', ')} FROM (${checked.sql}) AS q(${aliases}) LIMIT ${maxRows + 1}`;
    const started = performance.now();
    // CREATE TABLE AS answers the count of rows it stored.
    const stored = await connection.runAndReadAll(statement).catch((error: unknown) => this.failed(error, checked, statement));
    const elapsedMs = Math.round(performance.now() - started);
    const totalRows = Number(stored.getRows()[0]![0]);
    const privateRowCount =
      maskedValues.length === 0
        ? 0
        : Number(
            (
              await connection.runAndReadAll(`SELECT count(*) FILTER (WHERE masked_row) FROM ${resultTable(request.jobId)}`)
            ).getRows()[0]![0],
          );
    if (totalRows > maxRows) {
      await connection.run(`DROP TABLE ${resultTable(request.jobId)}`);
      throw new QueryFailure(
        'resourcesExceeded',
        `The result has more than ${maxRows.toLocaleString('en')} rows, the most this service stores for a job: aggregate or filter it`,
      );
    }
    const suppressed = checked.suppressedSql;
    const suppressedRowCount = suppressed
      ? Number(
          (
            await connection.runAndReadAll(suppressed).catch((error: unknown) => this.failed(error, checked, suppressed))
          ).getRows()[0]![0],
        )
      : 0;
    const { bytesProcessed, bytesBilled } = await usage;
    return {
      columns,
      totalRows,
      privateRowCount,
      suppressedRowCount,
      bytesProcessed,
      bytesBilled,
      elapsedMs,
      cacheHit: false,
      numDmlAffectedRows: null,
      destinationTable: { dataset_id: RESULTS_SCHEMA, table_id: request.jobId },
      statistics: null,
    };
  }
}

function resultTable(jobId: string): string {
  return `${RESULTS_SCHEMA}.${quotedIdentifier(`r_${jobId.replaceAll('-', '_')}`)}`;
}

function storedColumns(columns: ResultColumn[]): string {
  return columns.length === 0 ? '1' : columns.map((_, i) => `c${i}`).join(', ');
}

/**
 * Names as the answer keys rows by them: a repeated name gets `_2`, `_3`, ... Each name remembers
 * the next suffix to try, so that 20,000 columns of one name cost linear time (trying from `_2`
 * each time held the event loop 15 s).
 */
export function uniqueNames(names: string[]): string[] {
  const seen = new Set<string>();
  const nextSuffix = new Map<string, number>();
  return names.map((name) => {
    let unique = name === '' ? 'column' : name;
    const key = name.toLowerCase();
    let n = nextSuffix.get(key) ?? 2;
    for (; seen.has(unique.toLowerCase()); n += 1) unique = `${name}_${n}`;
    nextSuffix.set(key, n);
    seen.add(unique.toLowerCase());
    return unique;
  });
}

/** BIGINT values come as strings from DuckDB's JSON conversion; those that fit a JSON number become one. */
/**
 * DuckDB's print of a type, with JSON kept: JSON is VARCHAR under an alias, which the type's own
 * print drops, at any depth (`JSON[]`, `STRUCT("doc" JSON)`).
 */
export function typeText(type: DuckDBType): string {
  if (type.alias === 'JSON') return 'JSON';
  if (type instanceof DuckDBListType) return `${typeText(type.valueType)}[]`;
  if (type instanceof DuckDBArrayType) return `${typeText(type.valueType)}[${type.length}]`;
  if (type instanceof DuckDBMapType) return `MAP(${typeText(type.keyType)}, ${typeText(type.valueType)})`;
  if (type instanceof DuckDBStructType) {
    const entries = type.entryNames.map((name, i) => `${quotedIdentifier(name)} ${typeText(type.entryTypes[i]!)}`);
    return `STRUCT(${entries.join(', ')})`;
  }
  return type.toString();
}

function jsonValue(value: unknown, type: string): unknown {
  if (typeof value === 'string' && (type === 'BIGINT' || type === 'HUGEINT' || type === 'UBIGINT')) {
    const number = Number(value);
    return Number.isSafeInteger(number) ? number : value;
  }
  return value;
}

/**
 * What the query reads and is billed for, as BigQuery measures it: of each table it references,
 * the bytes of the columns it reads (duckdb-bytes.ts); billed with BigQuery's minimums
 * (billing.ts), so a table it reads no column of still counts.
 */
async function measuredUsage(
  warehouse: DuckDBInstance,
  columnBytes: ColumnBytes,
  catalog: ReadableCatalog,
  checked: Pick<CheckedQuery, 'read' | 'referenced'>,
): Promise<QueryUsage> {
  if (checked.referenced.length === 0) return { bytesProcessed: 0, bytesBilled: billedBytes([]) };
  const connection = await warehouse.connect();
  try {
    const read = await columnBytes.read(connection, catalog, checked.read);
    const perTable = checked.referenced.map((key) => read.get(key) ?? 0);
    return { bytesProcessed: perTable.reduce((sum, bytes) => sum + bytes, 0), bytesBilled: billedBytes(perTable) };
  } finally {
    connection.closeSync();
  }
}

function copyOptions(format: Exclude<ExportFormat, 'AVRO'>, compression: ExportCompression): string {
  switch (format) {
    case 'CSV':
      return `FORMAT csv, HEADER true, COMPRESSION ${compression === 'GZIP' ? 'gzip' : 'uncompressed'}`;
    case 'JSON':
      return `FORMAT json, COMPRESSION ${compression === 'GZIP' ? 'gzip' : 'uncompressed'}`;
    case 'PARQUET':
      // Parquet compresses inside the file; its deflate-based codec is GZIP.
      return `FORMAT parquet, COMPRESSION ${compression === 'NONE' ? 'uncompressed' : 'gzip'}`;
  }
}

type AvroKind = 'long' | 'int' | 'double' | 'boolean' | 'bytes' | 'string';

function avroKind(type: string): AvroKind {
  if (type === 'BIGINT') return 'long';
  if (['INTEGER', 'SMALLINT', 'TINYINT', 'UTINYINT', 'USMALLINT'].includes(type)) return 'int';
  if (type === 'DOUBLE' || type === 'FLOAT') return 'double';
  if (type === 'BOOLEAN') return 'boolean';
  if (type === 'BLOB') return 'bytes';
  return 'string';
}

/** Avro names: letters, digits and `_`, not starting with a digit, unique. */
export function avroNames(names: string[]): string[] {
  return uniqueNames(names.map((name) => name.replace(/[^A-Za-z0-9_]/g, '_').replace(/^(?=[0-9]|$)/, '_')));
}

/** An Avro object container file (avsc), deflate codec unless NONE; values other than numbers, booleans and bytes as text. */
async function writeAvro(
  connection: DuckDBConnection,
  select: string,
  columns: ResultColumn[],
  options: { compression: ExportCompression; file: string },
): Promise<void> {
  const kinds = columns.map((column) => avroKind(column.type));
  const names = avroNames(columns.map((column) => column.name));
  const type = avsc.Type.forSchema(
    {
      type: 'record',
      name: 'Row',
      fields: names.map((name, i) => ({ name, type: ['null', kinds[i]!], default: null })),
    },
    { registry: { long: bigLong } },
  );
  // Avro has no gzip codec: GZIP and DEFLATE both use its deflate codec (gzip's algorithm).
  const encoder = new avsc.streams.BlockEncoder(type, { codec: options.compression === 'NONE' ? 'null' : 'deflate' });
  // Done when the file is written and closed: the encoder's own 'finish' comes before its last
  // (compressed) block reaches the file.
  const written = pipeline(encoder, createWriteStream(options.file));
  try {
    const result = await connection.stream(select);
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      for (const row of chunk.getRows()) {
        const record = Object.fromEntries(names.map((name, i) => [name, avroValue(row[i], kinds[i]!)]));
        if (!encoder.write(record)) await once(encoder, 'drain');
      }
    }
    encoder.end();
  } catch (error) {
    // The file is closed before the failure goes on.
    encoder.destroy(error as Error);
    await written.catch(() => undefined);
    throw error;
  }
  await written;
}

function avroValue(value: unknown, kind: AvroKind): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'long':
      return BigInt(value as bigint);
    case 'int':
    case 'double':
      return Number(value);
    case 'boolean':
      return value;
    case 'bytes':
      return Buffer.from((value as { bytes: Uint8Array }).bytes);
    case 'string':
      return typeof value === 'string' ? value : (value as { toString(): string }).toString();
  }
}

// An absolute path, as DuckDB's I/O errors name files.
const FILE_PATH = /(?<=^|[\s"'(])\/[^\s"']+/g;

function outOfMemory(error: unknown): QueryFailure | undefined {
  if (!isOutOfMemory(error)) return undefined;
  return new QueryFailure(
    'resourcesExceeded',
    `The query needed more memory than this service allows a query: ${scrubbed(duckDbMessage(error).split('\n')[0]!)}`,
  );
}

/** DuckDB's message, first line only, without physical names or file paths. */
function failure(error: unknown): QueryFailure {
  if (error instanceof QueryFailure) return error;
  const message = duckDbMessage(error);
  return new QueryFailure('invalidQuery', scrubbed(message.split('\n')[0]!));
}

// A stored result's table, as DuckDB's messages name it.
const RESULT_TABLE = /(?:collab_results\.)?"?r_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12}"?/gi;

function scrubbed(message: string): string {
  return withoutPhysicalNames(message).replace(RESULT_TABLE, '<result>').replace(FILE_PATH, '<file>');
}
