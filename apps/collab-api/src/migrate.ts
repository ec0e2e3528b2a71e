/** `pnpm db:migrate` and the Kubernetes migration Job: migrates DATABASE_URL, creating the database if needed. */
import { migrateFromEnvironment } from '@repo/db';
import { createLogger } from '@repo/http';
import { migrationsDir } from './paths.js';

await migrateFromEnvironment({ migrationsDir, logger: createLogger({ service: 'collab-api-migrate', level: 'info' }) });
