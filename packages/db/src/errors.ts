/** What Prisma reports of a unique constraint violation, through a driver adapter or its own engine. */
interface UniqueViolationMeta {
  /** Prisma's own engine: the constraint's columns (or, on some databases, its name). */
  target?: unknown;
  /** A driver adapter (adapter-pg): the table and the index that refused the row. */
  driverAdapterError?: { cause?: { kind?: unknown; table?: unknown; constraint?: { index?: unknown; fields?: unknown } } };
}

/**
 * Prisma's error for a unique constraint violation, or node-postgres's. With `columns`, only a violation of the
 * constraint over exactly those columns, in its order: `['project_id', 'live_name']` is neither
 * `['live_name']` nor `['name']`. Postgres names the index, which Prisma names
 * `<table>_<columns>_key` by default (schema.prisma names no unique index otherwise).
 */
export function isUniqueViolation(error: unknown, columns?: string[]): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  // node-postgres's own error, from a statement the app ran on pg directly: SQLSTATE and the index.
  if (code === '23505') {
    const { table, constraint } = error as { table?: unknown; constraint?: unknown };
    return !columns || (typeof table === 'string' && constraint === `${table}_${columns.join('_')}_key`);
  }
  const meta = ((error as { meta?: unknown }).meta ?? {}) as UniqueViolationMeta;
  const cause = meta.driverAdapterError?.cause;
  // A raw query ($queryRaw, $executeRaw) fails with P2010, "raw query failed", carrying the adapter's cause.
  const raw = code === 'P2010' && cause?.kind === 'UniqueConstraintViolation';
  if (code !== 'P2002' && !raw) return false;
  if (!columns) return true;
  const fields = Array.isArray(meta.target) ? meta.target : cause?.constraint?.fields;
  if (Array.isArray(fields)) return fields.join('\0') === columns.join('\0');
  const index = cause?.constraint?.index ?? meta.target;
  return typeof cause?.table === 'string' && index === `${cause.table}_${columns.join('_')}_key`;
}

/**
 * The index a unique violation (isUniqueViolation) names: node-postgres's `constraint`, or the
 * driver adapter's; undefined for any other error, or when the error names none. What tells a
 * primary key's violation (`<table>_pkey`), which `columns` cannot name, from the others.
 */
export function violatedUniqueIndex(error: unknown): string | undefined {
  if (!isUniqueViolation(error)) return undefined;
  const { constraint, meta } = error as { constraint?: unknown; meta?: UniqueViolationMeta };
  const index = constraint ?? meta?.driverAdapterError?.cause?.constraint?.index;
  return typeof index === 'string' ? index : undefined;
}

/**
 * Prisma's error for a foreign key violation, or node-postgres's: a row refers to one that is
 * gone (an insert that lost a race with a delete), or a delete would leave rows referring to
 * nothing (ON DELETE RESTRICT).
 */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (code === '23503' || code === 'P2003') return true;
  const meta = ((error as { meta?: unknown }).meta ?? {}) as UniqueViolationMeta;
  return code === 'P2010' && meta.driverAdapterError?.cause?.kind === 'ForeignKeyConstraintViolation';
}
