/**
 * What a query reads, as BigQuery measures it, on the DuckDB warehouse: of each column it reads,
 * every row's value, the fixed-width types at their width (BigQuery's sizes), strings, bytes,
 * JSON and lists at their length + 2. BigQuery keeps these sizes as table metadata; here a
 * variable-width column is measured by a scan (tens of milliseconds for 10 million strings), and
 * its total kept until its table changes, so that a query over the same data does not scan it
 * again, and a limit on the bytes billed is checked before a query runs at no more cost.
 *
 * A table's data changes through loads alone (the mirror's schema changes give a changed column
 * another key: its type is part of it), and every load commits a row into the loads table
 * (load/duckdb.ts) with its rows. So a kept total is of the same data while the count of loads
 * and the table's row count are those it was measured with, both read in the measuring
 * statement's own snapshot. (A write into the file that bypasses the service, which owns it, is
 * noticed only when it changes the row count.)
 */
import { type DuckDBConnection, quotedIdentifier } from '@duckdb/node-api';
import { LRUCache } from 'lru-cache';
import { LOADS_TABLE } from '../load/duckdb.js';
import { physicalNames } from '../names.js';
import type { FieldType } from '../schema.js';
import type { ReadableCatalog, ReadableTable } from './analyze.js';

/** Logical bytes of a value of a fixed-width type (BigQuery's sizes); the others are measured. */
const FIXED_WIDTH: Partial<Record<FieldType, number>> = {
  INT64: 8,
  FLOAT64: 8,
  NUMERIC: 16,
  BOOL: 1,
  DATE: 8,
  DATETIME: 8,
  TIMESTAMP: 8,
  TIME: 8,
};

/** Measured totals kept, at most (one per column; the least recently used goes first). */
const KEPT_COLUMNS = 10_000;

type Column = ReadableTable['columns'][number];

interface Kept {
  loads: number;
  rows: number;
  bytes: number;
}

/** The bytes of the columns read, per table; measured totals kept while their tables stay the same. */
export class ColumnBytes {
  private readonly kept = new LRUCache<string, Kept>({ max: KEPT_COLUMNS });

  /** Bytes read of each table of `read` (catalog key → column names), on `connection`. */
  async read(
    connection: DuckDBConnection,
    catalog: ReadableCatalog,
    read: Map<string, Set<string>>,
  ): Promise<Map<string, number>> {
    const tables = [...read]
      .map(([key, names]) => {
        const table = catalog.get(key)!;
        return { key, name: tableName(table), columns: table.columns.filter((column) => names.has(column.name)) };
      })
      .filter((table) => table.columns.length > 0);
    const bytes = new Map<string, number>();
    if (tables.length === 0) return bytes;
    // Where the data is now: one statement, one snapshot.
    const now = await connection.runAndReadAll(
      `SELECT (SELECT count(*) FROM ${LOADS_TABLE})${tables.map((table) => `, (SELECT count(*) FROM ${table.name})`).join('')}`,
    );
    const [loads, ...rows] = now.getRows()[0]!.map(Number) as [number, ...number[]];
    for (const [i, table] of tables.entries()) {
      const current = { loads, rows: rows[i]! };
      const measured = table.columns.filter((column) => !fixedWidth(column));
      const missing = measured.filter((column) => !this.valid(this.kept.get(keyOf(table.name, column)), current));
      if (missing.length > 0) await this.measure(connection, table.name, missing);
      const variable = measured.reduce((sum, column) => sum + (this.kept.get(keyOf(table.name, column))?.bytes ?? 0), 0);
      const fixed = table.columns.reduce((sum, column) => sum + (fixedWidth(column) ?? 0), 0);
      bytes.set(table.key, current.rows * fixed + variable);
    }
    return bytes;
  }

  /** Scans the table for the total of each column, and keeps them with the snapshot's loads and rows. */
  private async measure(connection: DuckDBConnection, name: string, columns: Column[]): Promise<void> {
    const lengths = columns.map((column) => `coalesce(sum(strlen(CAST(${quotedIdentifier(column.name)} AS VARCHAR)) + 2), 0)`);
    const reader = await connection.runAndReadAll(
      `SELECT (SELECT count(*) FROM ${LOADS_TABLE}), count(*), ${lengths.join(', ')} FROM ${name}`,
    );
    const [loads, rows, ...totals] = reader.getRows()[0]!.map(Number) as [number, number, ...number[]];
    for (const [i, column] of columns.entries()) {
      this.kept.set(keyOf(name, column), { loads, rows, bytes: totals[i]! });
    }
  }

  private valid(kept: Kept | undefined, current: { loads: number; rows: number }): kept is Kept {
    return kept !== undefined && kept.loads === current.loads && kept.rows === current.rows;
  }
}

function fixedWidth(column: Column): number | undefined {
  return column.repeated ? undefined : FIXED_WIDTH[column.type];
}

function tableName(table: ReadableTable): string {
  const { dataset, table: name } = physicalNames(table.ref);
  return `${quotedIdentifier(dataset)}.${quotedIdentifier(name)}`;
}

/** A column's total is kept under its table, name, type and mode: a column changed by the schema is another. */
function keyOf(table: string, column: Column): string {
  return JSON.stringify([table, column.name, column.type, column.repeated]);
}
