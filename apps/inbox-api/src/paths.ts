import path from 'node:path';

/** The app's folder (this file sits in src/ or, compiled, in dist/). */
export const appRoot = path.resolve(import.meta.dirname, '..');
export const migrationsDir = path.join(appRoot, 'prisma', 'migrations');
export const defaultDataDir = path.join(appRoot, '.data');
