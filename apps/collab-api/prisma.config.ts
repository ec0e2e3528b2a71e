import { defineConfig } from 'prisma/config';

// `prisma generate` never runs the native schema engine but insists that one exists, and it
// cannot be downloaded offline. Migrations are applied by src/migrate.ts (see packages/db).
if (process.argv.includes('generate')) process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? '' },
});
