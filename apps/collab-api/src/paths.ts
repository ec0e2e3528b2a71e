import path from 'node:path';

/** The app's folder (this file sits in src/ or, compiled, in dist/). */
export const appRoot = path.resolve(import.meta.dirname, '..');
export const migrationsDir = path.join(appRoot, 'prisma', 'migrations');
export const defaultDataDir = path.join(appRoot, '.data');

/** A job's scratch folder under DATA_DIR/tmp: named after the job, so a retry finds what a killed attempt left. */
export function jobWorkDir(dataDir: string | undefined, name: string): string {
  return path.join(dataDir ?? defaultDataDir, 'tmp', name);
}
