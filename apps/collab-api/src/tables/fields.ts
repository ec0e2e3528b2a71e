import type { Field } from '../adapters/warehouse/index.js';
import type { Prisma, Table } from '../generated/prisma/client.js';

/** The columns as tables.schema stores them. */
export function storedFields(fields: Field[]): Prisma.InputJsonArray {
  return fields.map((field) => ({ ...field }));
}

/** The columns of a table; only storedFields writes them, from input that tableSchemaInput normalised. */
export function fieldsOf(table: Pick<Table, 'schema'>): Field[] {
  return table.schema as unknown as Field[];
}

/** Same columns in the same order (JSONB does not keep the key order, so objects are compared key by key). */
export function sameFields(a: Field[], b: Field[]): boolean {
  return (
    a.length === b.length &&
    a.every((field, index) => {
      const other = b[index]!;
      return (
        field.name === other.name &&
        field.type === other.type &&
        field.mode === other.mode &&
        field.description === other.description &&
        field.private === other.private
      );
    })
  );
}

/**
 * Columns a load found (autodetect), keeping the private flag of the table's column of the same
 * name: a load never clears one (a file cannot say what is private). Taking a flag off is a schema
 * change (PATCH) by someone allowed to make it.
 */
export function keepingPrivateFlags(loaded: Field[], current: Field[]): Field[] {
  const privateNames = new Set(current.filter((field) => field.private).map((field) => field.name.toLowerCase()));
  return loaded.map((field) => (privateNames.has(field.name.toLowerCase()) ? { ...field, private: true } : field));
}
