import type { AggregationRule } from '../adapters/warehouse/query/rules.js';
import type { Field } from '../adapters/warehouse/index.js';
import { Prisma, type Table } from '../generated/prisma/client.js';

/** A table's analysis rule as the API shows it and tables.analysis_rule stores it (rules.ts enforces it). */
export interface AnalysisRule {
  type: 'aggregation';
  privacy_unit: string;
  min_distinct: number;
}

export function ruleOf(table: Pick<Table, 'analysisRule'>): AnalysisRule | null {
  return (table.analysisRule as AnalysisRule | null) ?? null;
}

/** The rule as the query sandbox applies it. */
export function aggregationRule(rule: AnalysisRule | null): AggregationRule | null {
  return rule && { privacyUnit: rule.privacy_unit, minDistinct: rule.min_distinct };
}

/** The column's value: SQL NULL for no rule; left alone when absent (a change recorded before rules existed). */
export function storedRule(rule: AnalysisRule | null | undefined): Prisma.InputJsonValue | typeof Prisma.DbNull | undefined {
  if (rule === undefined) return undefined;
  return rule === null ? Prisma.DbNull : { ...rule };
}

/**
 * Why `rule` cannot stand on a table of columns `fields`: its privacy unit must be one of them,
 * public (a join-only column cannot be counted) and not REPEATED.
 */
export function ruleProblem(rule: AnalysisRule, fields: Field[]): string | undefined {
  const column = fields.find((field) => field.name.toLowerCase() === rule.privacy_unit.toLowerCase());
  if (!column) return `privacy_unit "${rule.privacy_unit}" is not a column of the table`;
  if (column.private) {
    return `privacy_unit "${column.name}" is a private column: the threshold counts its distinct values in every group, so it must be public`;
  }
  if (column.mode === 'REPEATED') return `privacy_unit "${column.name}" is REPEATED: a privacy unit is one value a row`;
  return undefined;
}

/** The rule with the privacy unit spelt as the column is. */
export function canonicalRule(rule: AnalysisRule, fields: Field[]): AnalysisRule {
  const column = fields.find((field) => field.name.toLowerCase() === rule.privacy_unit.toLowerCase());
  return { ...rule, privacy_unit: column?.name ?? rule.privacy_unit };
}
