/**
 * Table schemas as the API takes them (contract.md): a BigQuery-style list of columns, and the
 * rules for changing the schema of a table that exists. Pure: no warehouse, no I/O.
 */
import { ConflictError } from '@repo/errors';
import { z } from 'zod';

/** Canonical column types; the aliases below are accepted and normalised to these. */
export const FIELD_TYPES = [
  'STRING',
  'INT64',
  'FLOAT64',
  'NUMERIC',
  'BOOL',
  'DATE',
  'DATETIME',
  'TIMESTAMP',
  'TIME',
  'BYTES',
  'JSON',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** BigQuery's legacy names for the same types. */
const TYPE_ALIASES: Record<string, FieldType> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL' };

export const FIELD_MODES = ['NULLABLE', 'REQUIRED', 'REPEATED'] as const;
export type FieldMode = (typeof FIELD_MODES)[number];

/** One column, normalised: canonical type, explicit mode and privacy. */
export interface Field {
  name: string;
  type: FieldType;
  mode: FieldMode;
  description?: string;
  /** Masked in query results seen by other tenants (contract.md, Privacy). */
  private: boolean;
}

const MAX_NAME_LENGTH = 300;
const MAX_DESCRIPTION_LENGTH = 1024;
// BigQuery's own limit; DuckDB has none that matters here.
const MAX_COLUMNS = 10_000;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
// BigQuery refuses column names with these prefixes (case-insensitively).
const RESERVED_PREFIXES = ['_TABLE_', '_FILE_', '_PARTITION', '_ROW_TIMESTAMP', '__ROOT__', '_COLIDENTIFIER'];

const fieldName = z
  .string()
  .min(1)
  .max(MAX_NAME_LENGTH)
  .regex(IDENTIFIER, 'Column names may contain only letters, digits and underscores, and may not start with a digit')
  .refine((name) => !RESERVED_PREFIXES.some((prefix) => name.toUpperCase().startsWith(prefix)), {
    message: `Column names may not start with ${RESERVED_PREFIXES.join(', ')} (reserved by the warehouse)`,
  });

/** An upper-cased keyword from a fixed list; unknown words name the accepted ones. */
function keyword<T extends string>(accepted: readonly T[], normalise: (word: string) => T | undefined, hint = '') {
  return z.string().transform((raw, ctx) => {
    const value = normalise(raw.trim().toUpperCase());
    if (value !== undefined) return value;
    ctx.addIssue({
      code: 'invalid_value',
      values: [...accepted],
      input: raw,
      message: `Expected one of ${accepted.join(', ')}${hint}`,
    });
    return z.NEVER;
  });
}

const fieldType = keyword(
  FIELD_TYPES,
  (word) => FIELD_TYPES.find((type) => type === word) ?? TYPE_ALIASES[word],
  ' (or INTEGER, FLOAT, BOOLEAN); nested RECORD/STRUCT columns are not supported, use JSON',
);

const fieldMode = keyword(FIELD_MODES, (word) => FIELD_MODES.find((mode) => mode === word));

/** One column as a client writes it; `null` counts as absent. */
export const fieldInput = z
  .strictObject({
    name: fieldName,
    type: fieldType,
    mode: fieldMode.nullish(),
    description: z.string().max(MAX_DESCRIPTION_LENGTH).nullish(),
    private: z.boolean().nullish(),
  })
  .transform((input): Field => ({
    name: input.name,
    type: input.type,
    mode: input.mode ?? 'NULLABLE',
    // An empty description is no description, so that '' and absent never differ in a plan.
    ...(input.description ? { description: input.description } : {}),
    private: input.private ?? false,
  }));

/** Column names are unique case-insensitively, as both warehouses compare them. */
const fieldList = z
  .array(fieldInput)
  .min(1, 'A table needs at least one column')
  .max(MAX_COLUMNS)
  .superRefine((fields, ctx) => {
    const firstIndex = new Map<string, number>();
    fields.forEach((field, index) => {
      const key = field.name.toLowerCase();
      const first = firstIndex.get(key);
      if (first === undefined) {
        firstIndex.set(key, index);
        return;
      }
      ctx.addIssue({
        code: 'custom',
        path: [index, 'name'],
        message: `Duplicate column name "${field.name}": column ${first} has the same name (names are case-insensitive)`,
      });
    });
  });

const wrappedFieldList = z.strictObject({ fields: fieldList }).transform((wrapped) => wrapped.fields);

/**
 * A table's `schema` as the API takes it: a list of columns, or `{ "fields": [...] }`. Issues
 * keep their paths (`[2, "type"]` or `["fields", 2, "type"]`), which a plain z.union would
 * collapse into one "invalid_union" issue at the root.
 */
export const tableSchemaInput = z.unknown().transform((value, ctx): Field[] => {
  if (typeof value !== 'object' || value === null) {
    ctx.addIssue({
      code: 'invalid_type',
      expected: 'array',
      input: value,
      message: 'Expected a list of columns or {"fields": [...]}',
    });
    return z.NEVER;
  }
  const result = Array.isArray(value)
    ? fieldList.safeParse(value, { reportInput: true })
    : wrappedFieldList.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
});

/** A change that a table with rows can take in place. */
export type SchemaChange =
  | { kind: 'add_column'; field: Field }
  | { kind: 'relax_column'; name: string }
  | { kind: 'set_description'; name: string; description: string | undefined }
  | { kind: 'set_private'; name: string; private: boolean };

/**
 * How a warehouse gets from the old schema to the new one: in-place changes (possibly none), or,
 * for an empty table only, replacing the table by an empty one with the new columns.
 */
export type SchemaPlan = { kind: 'alter'; changes: SchemaChange[] } | { kind: 'replace'; fields: Field[] };

/**
 * Plans a schema change. A table with rows takes only what keeps every row valid and what
 * BigQuery can apply in place: new NULLABLE or REPEATED columns after the existing ones,
 * REQUIRED relaxed to NULLABLE, new descriptions and private flags. Anything else (dropping,
 * retyping, reordering or tightening columns, new REQUIRED columns) is refused with a
 * ConflictError naming each column and why.
 *
 * An empty table takes any change: no row can be lost or become invalid, so when the change
 * needs more than the in-place ones, the plan replaces the table by an empty one.
 * Columns are matched by exact name; a column whose name changes is dropped and added.
 */
export function planSchemaChange(oldFields: Field[], newFields: Field[], options: { tableHasRows: boolean }): SchemaPlan {
  const oldByName = new Map(oldFields.map((field) => [field.name, field]));
  const newNames = new Set(newFields.map((field) => field.name));
  const changes: SchemaChange[] = [];
  const problems: string[] = [];

  for (const old of oldFields) {
    if (!newNames.has(old.name)) problems.push(`column "${old.name}" would be dropped`);
  }
  for (const field of newFields) {
    const old = oldByName.get(field.name);
    if (old) {
      const problem = changeOfExistingColumn(old, field, changes);
      if (problem) problems.push(problem);
    } else if (field.mode === 'REQUIRED') {
      problems.push(`new column "${field.name}" is REQUIRED, but the existing rows have no value for it`);
    } else {
      changes.push({ kind: 'add_column', field });
    }
  }
  problems.push(...orderProblems(oldFields, newFields));

  if (problems.length === 0) return { kind: 'alter', changes };
  if (!options.tableHasRows) return { kind: 'replace', fields: newFields };
  throw new ConflictError(
    `The table has rows, so its schema cannot change this way: ${problems.join('; ')}. ` +
      'A table with rows can only get new NULLABLE or REPEATED columns after the existing ones, ' +
      'REQUIRED columns relaxed to NULLABLE, and new descriptions or private flags.',
    { problems },
  );
}

/** Adds the in-place changes between two versions of a column; returns why it cannot be in place. */
function changeOfExistingColumn(old: Field, field: Field, changes: SchemaChange[]): string | undefined {
  if (old.type !== field.type) {
    return `column "${field.name}" would change type from ${old.type} to ${field.type}`;
  }
  if (old.mode !== field.mode) {
    if (old.mode !== 'REQUIRED' || field.mode !== 'NULLABLE') {
      return `column "${field.name}" would change mode from ${old.mode} to ${field.mode}`;
    }
    changes.push({ kind: 'relax_column', name: field.name });
  }
  if (old.description !== field.description) {
    changes.push({ kind: 'set_description', name: field.name, description: field.description });
  }
  if (old.private !== field.private) {
    changes.push({ kind: 'set_private', name: field.name, private: field.private });
  }
  return undefined;
}

/**
 * Warehouses append new columns and cannot reorder existing ones, so the new list must keep the
 * existing columns in their order and put new ones after them; then the stored schema and the
 * warehouse's columns always agree on order.
 */
function orderProblems(oldFields: Field[], newFields: Field[]): string[] {
  const oldNames = new Set(oldFields.map((field) => field.name));
  const newNames = new Set(newFields.map((field) => field.name));
  const keptInOldOrder = oldFields.filter((field) => newNames.has(field.name)).map((field) => field.name);
  const keptInNewOrder = newFields.filter((field) => oldNames.has(field.name)).map((field) => field.name);
  if (keptInOldOrder.join('\0') !== keptInNewOrder.join('\0')) {
    return [`existing columns would be reordered (${keptInOldOrder.join(', ')} would become ${keptInNewOrder.join(', ')})`];
  }
  const lastKept = newFields.findLastIndex((field) => oldNames.has(field.name));
  return newFields
    .slice(0, Math.max(lastKept, 0))
    .filter((field) => !oldNames.has(field.name))
    .map((field) => `new column "${field.name}" would come before existing columns (new columns go after them)`);
}
