/**
 * The sandbox of query jobs, for both warehouses: a DuckDB instance in memory with no file or
 * network access, no extension loading and its configuration locked, which holds no data. There
 * the caller's text is parsed, checked and rewritten (analyze.ts), printed back as the SQL that
 * will run, and planned on empty stand-ins of the tables it reads (in an in-memory database
 * attached for that one check), so that DuckDB's binder resolves its columns and lineage.ts
 * follows them through the plan. The analysis rules of other tenants' tables (rules.ts) are
 * checked there too, and an aggregation threshold written into the statement's HAVING.
 */
import { type DuckDBConnection, DuckDBInstance, quotedIdentifier } from '@duckdb/node-api';
import { columnType } from '../duckdb-sql.js';
import { physicalNames } from '../names.js';
import {
  analyzeQuery,
  type GuardedQuery,
  namedTables,
  parseTree,
  type ReadableCatalog,
  type ReadableTable,
  singleStatement,
} from './analyze.js';
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
import {
  aggregationRefusal,
  duckDbQuoted,
  joinOnlyRefusal,
  maskedNoOpRefusal,
  type RuleTable,
  type Threshold,
  threshold,
  thresholdInstances,
  thresholdSql,
} from './rules.js';

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
  /** Why the statement breaks an analysis rule of another tenant's table (rules.ts): it must not run. */
  refusal?: string;
  /**
   * Under an aggregation rule: the threshold, and the statement that counts the groups it drops
   * (`sql` has it in its HAVING), one row of one column.
   */
  threshold?: Threshold;
  suppressedSql?: string;
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
  /** The readable tables `text` names, wherever it names them: those of a statement the check refused or failed. */
  namedTables(text: string, catalog: ReadableCatalog): Promise<string[]>;
  close(): Promise<void>;
}

type Node = Record<string, unknown>;

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
      const readsMaskedTable = tables.some(({ table }) => table.columns.some((column) => column.masked));
      const checked: CheckedQuery = {
        text,
        sql,
        lineage: planned.lineage,
        readsMaskedTable,
        read,
        referenced: tables.map(({ key }) => key),
        located,
        names: planned.names,
      };
      const maskedColumns = tables.flatMap(({ key, table }) =>
        table.columns
          .filter((column) => column.masked)
          .map((column) => ({
            table: key,
            column: column.name,
            duckDbType: columnType({ type: column.type, mode: column.repeated ? 'REPEATED' : 'NULLABLE' }),
          })),
      );
      const refusal = joinOnlyRefusal(planned.lineage, readsMaskedTable) ?? maskedNoOpRefusal(guarded.tree, maskedColumns);
      if (refusal) return { ...checked, refusal };
      const ruled = tables.flatMap(({ key, table }) =>
        table.shared?.aggregation ? [{ key, rule: table.shared.aggregation }] : [],
      );
      if (ruled.length === 0) return checked;
      return { ...checked, ...(await this.withThreshold(connection, guarded, planned.plan, ruled, catalog, read)) };
    } finally {
      connection.closeSync();
    }
  }

  /** analyze.ts namedTables of `text`'s parse tree; none when it does not parse. */
  async namedTables(text: string, catalog: ReadableCatalog): Promise<string[]> {
    const connection = await this.instance.connect();
    try {
      const serialized = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [text]);
      const parsed = parseTreeOrNone(String(serialized.getRows()[0]![0]));
      return !parsed || parsed.error ? [] : namedTables(parsed.statements, catalog);
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

  /**
   * The statement under the aggregation rules of `ruled` (rules.ts): refused when its shape keeps
   * the threshold from holding, else with the threshold in its HAVING (guarding the caller's) and a statement
   * that counts the groups the threshold drops (before the caller's own HAVING, so that no
   * condition of the caller's can probe a dropped group). `read` gains the privacy units.
   */
  private async withThreshold(
    connection: DuckDBConnection,
    guarded: GuardedQuery,
    plan: Node | undefined,
    ruled: RuleTable[],
    catalog: ReadableCatalog,
    read: Map<string, Set<string>>,
  ): Promise<Partial<Pick<CheckedQuery, 'sql' | 'refusal' | 'threshold' | 'suppressedSql'>>> {
    const tree = guarded.tree as Node;
    for (const { key, rule } of ruled) {
      const unit = catalog.get(key)!.columns.find((column) => column.name === rule.privacyUnit);
      // A load that dropped the column or made it REPEATED, or a flag set since: the rule cannot be applied.
      if (!unit || unit.masked || unit.repeated) {
        return {
          refusal: `${key} has an aggregation rule whose privacy unit ${rule.privacyUnit} is no longer a public column of one value a row: its owner must fix the rule before it can be read`,
        };
      }
    }
    const shape = plan ? aggregationRefusal(plan, ruled) : undefined;
    if (shape || !plan) {
      return {
        refusal:
          shape ??
          `${ruled.map((table) => table.key).join(', ')} has an aggregation rule, and the rules checker cannot follow this query's plan: it is refused`,
      };
    }
    const keys = new Map(
      [...catalog].flatMap(([key, table]) => {
        if (!table) return [];
        const { dataset, table: name } = physicalNames(table.ref);
        return [[`${dataset}.${name}`, key] as const];
      }),
    );
    const instances = thresholdInstances(tree, ruled, {
      keyOf: (schema, table) => keys.get(`${schema}.${table}`),
      unaliased: guarded.unaliased,
    });
    if (typeof instances === 'string') return { refusal: instances };
    const rule = threshold(instances, ruled);
    for (const { key, unit } of rule.units) read.set(key, (read.get(key) ?? new Set<string>()).add(unit));
    const expression = thresholdSql(rule, { quote: duckDbQuoted, qualifier: (unit) => duckDbQuoted(unit.alias) });
    const node = async (text: string) => {
      const parsed = singleStatement(
        String((await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [text])).getRows()[0]![0]),
      );
      return (parsed.select_list as Node[])[0]!;
    };
    const print = async () =>
      String(
        (
          await connection.runAndReadAll('SELECT json_deserialize_sql($1::JSON)', [
            JSON.stringify({ error: false, statements: [{ node: tree, named_param_map: [] }] }),
          ])
        ).getRows()[0]![0],
      );
    const having = tree.having as Node | null | undefined;
    if (having) {
      // The caller's HAVING only for groups that meet the threshold: `CASE WHEN threshold THEN (1 = 1)
      // ELSE false END`, its THEN then replaced by it. Under an AND, DuckDB may evaluate either side
      // first, and a HAVING that fails on some groups (error(), a failing cast) would probe dropped ones.
      const gated = await node(`SELECT CASE WHEN ${expression} THEN (1 = 1) ELSE false END`);
      (gated.case_checks as { then_expr: Node }[])[0]!.then_expr = having;
      tree.having = gated;
    } else {
      tree.having = await node(`SELECT ${expression}`);
    }
    const sql = await print();
    tree.having = await node(`SELECT NOT ${expression}`);
    tree.modifiers = [];
    return { sql, threshold: rule, suppressedSql: `SELECT count(*) FROM (${await print()}) AS dropped` };
  }

  /** Plans `sql` on empty stand-ins of `tables`, in a database attached for this check alone and detached after. */
  private async plan(
    connection: DuckDBConnection,
    sql: string,
    tables: { key: string; table: ReadableTable }[],
    options: CheckOptions,
  ): Promise<{ lineage: Lineage | undefined; names?: string[]; plan?: Node }> {
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
        plans?: Node[];
      };
      if (result.error) {
        const message = (result.error_message ?? 'The query could not be planned').replaceAll(`${database}.`, '');
        // An operator DuckDB cannot write out: a plan lineage.ts cannot follow, not the caller's mistake.
        if (/does not support serialization/.test(message)) return { lineage: undefined };
        throw new Error(`${errorClassOfType(result.error_type ?? '')}: ${message}`);
      }
      const names = options.names ? await resultNames(connection, sql) : undefined;
      try {
        const plan = result.plans![0]!;
        const lineage = planLineage(plan, {
          catalog: database,
          standIn: (schema, table) => standIns.get(`${schema}.${table}`),
        });
        return { lineage, names, plan };
      } catch (error) {
        if (error instanceof LineageUnknown) return { lineage: undefined, names, plan: result.plans![0] };
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

/** parseTree's reading, or none for a text it refuses (a constant past DOUBLE's range). */
function parseTreeOrNone(serialized: string): { error: boolean; statements?: unknown } | undefined {
  try {
    return parseTree(serialized) as { error: boolean; statements?: unknown };
  } catch (error) {
    if (error instanceof QueryFailure) return undefined;
    throw error;
  }
}
