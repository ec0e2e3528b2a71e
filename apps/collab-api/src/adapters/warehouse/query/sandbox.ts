/**
 * The sandbox of query jobs, for both warehouses: a DuckDB instance in memory with no file or
 * network access, no extension loading and its configuration locked, which holds no data. There
 * the caller's text is parsed, checked and rewritten (analyze.ts), printed back as the SQL that
 * will run, and planned on empty stand-ins of the tables it reads (in an in-memory database
 * attached for that one check), so that DuckDB's binder resolves its columns and lineage.ts
 * follows them through the plan.
 */
import { type DuckDBConnection, DuckDBInstance, quotedIdentifier } from '@duckdb/node-api';
import { columnType } from '../duckdb-sql.js';
import { physicalNames } from '../names.js';
import { analyzeQuery, type ReadableCatalog, type ReadableTable, singleStatement } from './analyze.js';
import {
  byteOffset,
  callerLocation,
  errorClassOfType,
  type Located,
  locations,
  pointedOffset,
  type Position,
  positionAt,
} from './failures.js';
import { QueryFailure } from './interface.js';
import { oversizedConstantList } from './limits.js';
import { isPrivate, type Lineage, LineageUnknown, planLineage, type StandIn } from './lineage.js';

/** The sandbox's settings: nothing but parsing, printing and planning SQL happens there. */
export const SANDBOX = {
  enable_external_access: 'false',
  autoload_known_extensions: 'false',
  autoinstall_known_extensions: 'false',
  lock_configuration: 'true',
  // The allocator is the process's: every instance made sets it, the warehouse's as well (see warehouse/duckdb.ts).
  allocator_background_threads: 'true',
};

export interface CheckedQuery {
  /** The caller's text. */
  text: string;
  /** The statement to run: DuckDB's print of the checked tree, with physical table names. */
  sql: string;
  /** Lineage of the statement's plan; undefined when the plan has a shape lineage.ts does not follow. */
  lineage: Lineage | undefined;
  /** Whether the statement reads a table with masked columns (another tenant's, with private ones). */
  readsMaskedTable: boolean;
  /** Columns read, by catalog key: the plan's, or every column of each table read when the plan was not followed. */
  read: Map<string, Set<string>>;
  /** Catalog keys of the tables the statement references, each once (each is billed at least BigQuery's minimum). */
  referenced: string[];
  /** Nodes of the caller's parse tree with their locations (to place a failure in the caller's text). */
  located: Located[];
  /** The result's column names as DuckDB binds them (asked for with `names`). */
  names?: string[];
}

/** Per result column, whether it is masked; every column is, once a masked table is read, when lineage does not fit the result. */
export function resultPrivacy(checked: Pick<CheckedQuery, 'lineage' | 'readsMaskedTable'>, count: number): boolean[] {
  const columns = checked.lineage?.columns;
  if (!columns || columns.length !== count) return Array.from({ length: count }, () => checked.readsMaskedTable);
  return columns.map((column) => isPrivate(column, checked.readsMaskedTable));
}

export interface CheckOptions {
  /** Also answer the result's column names as DuckDB binds them. */
  names?: boolean;
  /**
   * Refuse (QueryFailure resourcesExceeded) a list built from constants with more values than this,
   * before DuckDB plans the statement: planning folds constants, and nothing interrupts that (limits.ts).
   */
  maxListElements?: number;
}

/** What query engines ask of the sandbox: QuerySandbox in this thread, or openSandboxThread's in a thread of its own. */
export interface Sandbox {
  /**
   * Checks `text` against the catalog (QueryRefused), prints the SQL that will run and follows its
   * columns. A statement DuckDB cannot bind fails with DuckDB's message (an Error).
   */
  check(text: string, catalog: ReadableCatalog, options?: CheckOptions): Promise<CheckedQuery>;
  /**
   * Where DuckDB's message about a failure of `executed` (a statement around `checked.sql`) points
   * in the caller's text, if it points at a node of the checked statement.
   */
  locate(checked: CheckedQuery, executed: string, message: string): Promise<Position | undefined>;
  close(): Promise<void>;
}

export class QuerySandbox implements Sandbox {
  private attached = 0;

  private constructor(private readonly instance: DuckDBInstance) {}

  static async open(): Promise<QuerySandbox> {
    return new QuerySandbox(await DuckDBInstance.create(':memory:', SANDBOX));
  }

  async check(text: string, catalog: ReadableCatalog, options: CheckOptions = {}): Promise<CheckedQuery> {
    const connection = await this.instance.connect();
    try {
      const serialized = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [text]);
      const node = singleStatement(String(serialized.getRows()[0]![0]));
      const located = locations(node);
      const guarded = analyzeQuery(node, catalog, physicalNames);
      const oversized =
        options.maxListElements === undefined
          ? undefined
          : oversizedConstantList(guarded.tree, { maxListElements: options.maxListElements });
      if (oversized) throw new QueryFailure('resourcesExceeded', oversized);
      const printed = await connection.runAndReadAll('SELECT json_deserialize_sql($1::JSON)', [
        JSON.stringify({ error: false, statements: [{ node: guarded.tree, named_param_map: [] }] }),
      ]);
      const sql = String(printed.getRows()[0]![0]);
      const tables = [...guarded.tables].map((key) => ({ key, table: catalog.get(key)! }));
      const planned = await this.plan(connection, sql, tables, options);
      const read =
        planned.lineage?.read ??
        new Map(tables.map(({ key, table }) => [key, new Set(table.columns.map((column) => column.name))]));
      return {
        text,
        sql,
        lineage: planned.lineage,
        readsMaskedTable: tables.some(({ table }) => table.columns.some((column) => column.masked)),
        read,
        referenced: tables.map(({ key }) => key),
        located,
        names: planned.names,
      };
    } finally {
      connection.closeSync();
    }
  }

  async locate(checked: CheckedQuery, executed: string, message: string): Promise<Position | undefined> {
    const start = executed.indexOf(checked.sql);
    const offset = pointedOffset(message, executed);
    if (start === -1 || offset === undefined || offset < start || offset >= start + checked.sql.length) return undefined;
    const connection = await this.instance.connect();
    try {
      const serialized = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [checked.sql]);
      const printed = locations(JSON.parse(String(serialized.getRows()[0]![0])));
      const at = callerLocation(checked.located, printed, byteOffset(checked.sql, offset - start));
      return at === undefined ? undefined : positionAt(checked.text, at);
    } finally {
      connection.closeSync();
    }
  }

  close(): Promise<void> {
    this.instance.closeSync();
    return Promise.resolve();
  }

  /** Plans `sql` on empty stand-ins of `tables`, in a database attached for this check alone and detached after. */
  private async plan(
    connection: DuckDBConnection,
    sql: string,
    tables: { key: string; table: ReadableTable }[],
    options: CheckOptions,
  ): Promise<{ lineage: Lineage | undefined; names?: string[] }> {
    this.attached += 1;
    const database = `sandbox_${this.attached}`;
    await connection.run(`ATTACH ':memory:' AS ${database}`);
    try {
      await connection.run(`USE ${database}`);
      const standIns = new Map<string, StandIn>();
      for (const { key, table } of tables) {
        const { dataset, table: name } = physicalNames(table.ref);
        const columns = table.columns.map(
          (column) =>
            `${quotedIdentifier(column.name)} ${columnType({ type: column.type, mode: column.repeated ? 'REPEATED' : 'NULLABLE' })}`,
        );
        await connection.run(`CREATE SCHEMA IF NOT EXISTS ${quotedIdentifier(dataset)}`);
        await connection.run(`CREATE TABLE ${quotedIdentifier(dataset)}.${quotedIdentifier(name)} (${columns.join(', ')})`);
        standIns.set(`${dataset}.${name}`, { key, columns: table.columns });
      }
      const planned = await connection.runAndReadAll('SELECT json_serialize_plan($1::VARCHAR)', [sql]);
      const result = JSON.parse(String(planned.getRows()[0]![0])) as {
        error: boolean;
        error_type?: string;
        error_message?: string;
        plans?: Record<string, unknown>[];
      };
      if (result.error) {
        const message = (result.error_message ?? 'The query could not be planned').replaceAll(`${database}.`, '');
        // An operator DuckDB cannot write out: a plan lineage.ts cannot follow, not the caller's mistake.
        if (/does not support serialization/.test(message)) return { lineage: undefined };
        throw new Error(`${errorClassOfType(result.error_type ?? '')}: ${message}`);
      }
      const names = options.names ? await resultNames(connection, sql) : undefined;
      try {
        const lineage = planLineage(result.plans![0]!, {
          catalog: database,
          standIn: (schema, table) => standIns.get(`${schema}.${table}`),
        });
        return { lineage, names };
      } catch (error) {
        if (error instanceof LineageUnknown) return { lineage: undefined, names };
        throw error;
      }
    } finally {
      await connection.run('USE memory');
      await connection.run(`DETACH ${database}`);
    }
  }
}

async function resultNames(connection: DuckDBConnection, sql: string): Promise<string[]> {
  const prepared = await connection.prepare(sql);
  return Array.from({ length: prepared.columnCount }, (_, i) => prepared.columnName(i));
}
