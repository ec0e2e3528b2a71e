import type pg from 'pg';

/**
 * A comparable description of a database's public schema: one line per column, constraint,
 * index, enum and extension, sorted. Column order is left out on purpose: `ALTER TABLE ADD
 * COLUMN` appends, so a migrated table may list its columns in another order than a fresh one.
 */
export async function schemaSnapshot(client: pg.ClientBase): Promise<string[]> {
  const queries: string[] = [
    `SELECT 'column ' || table_name || '.' || column_name || ': ' || udt_name
        || coalesce('(' || character_maximum_length || ')', '')
        || coalesce(' precision ' || datetime_precision, '')
        || CASE WHEN data_type = 'numeric' THEN coalesce(' numeric(' || numeric_precision || ',' || numeric_scale || ')', '') ELSE '' END
        || CASE WHEN is_nullable = 'NO' THEN ' not null' ELSE '' END
        || coalesce(' default ' || column_default, '') AS line
       FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    `SELECT 'constraint ' || rel.relname || '.' || con.conname || ': ' || pg_get_constraintdef(con.oid) AS line
       FROM pg_constraint con
       JOIN pg_class rel ON rel.oid = con.conrelid
       JOIN pg_namespace ns ON ns.oid = rel.relnamespace
      WHERE ns.nspname = 'public' AND rel.relname <> '_prisma_migrations'`,
    `SELECT 'index ' || indexname || ': ' || indexdef AS line
       FROM pg_indexes
      WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
    `SELECT 'enum ' || t.typname || ': ' || string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) AS line
       FROM pg_type t
       JOIN pg_enum e ON e.enumtypid = t.oid
       JOIN pg_namespace ns ON ns.oid = t.typnamespace
      WHERE ns.nspname = 'public'
      GROUP BY t.typname`,
    `SELECT 'extension ' || extname AS line FROM pg_extension WHERE extname <> 'plpgsql'`,
  ];
  const lines: string[] = [];
  for (const sql of queries) {
    const { rows } = await client.query<{ line: string }>(sql);
    lines.push(...rows.map((row) => row.line));
  }
  return lines.sort();
}
