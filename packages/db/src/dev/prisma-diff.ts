import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { adminDatabaseUrl } from './test-database.js';

const run = promisify(execFile);
const packageRoot = path.resolve(import.meta.dirname, '..', '..');

/**
 * The SQL that turns a database shaped like datamodel `from` (an empty one when omitted) into one shaped
 * like datamodel `to`, computed by Prisma 6's WebAssembly schema engine. The CLI insists on a
 * database connection (the test server's admin database) but reads and writes nothing there.
 */
export async function diffDatamodels(options: { from?: string; to: string }): Promise<string> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'prisma-diff-'));
  try {
    const to = await withDatasourceUrl(options.to, path.join(scratch, 'to.prisma'));
    const from =
      options.from === undefined
        ? ['--from-empty']
        : ['--from-schema-datamodel', await withDatasourceUrl(options.from, path.join(scratch, 'from.prisma'))];
    const prismaCli = path.join(
      path.dirname(createRequire(import.meta.url).resolve('prisma6/package.json')),
      'build',
      'index.js',
    );
    const { stdout } = await run(
      process.execPath,
      [
        prismaCli,
        'migrate',
        'diff',
        ...from,
        '--to-schema-datamodel',
        to,
        '--script',
        '--config',
        path.join(packageRoot, 'prisma6.config.ts'),
      ],
      {
        cwd: scratch,
        env: {
          ...process.env,
          DATABASE_URL: adminDatabaseUrl(),
          PRISMA_DIFF_DATABASE_URL: adminDatabaseUrl(),
          // Prisma 6 wants native engines to exist even when it runs the WebAssembly one.
          PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
          PRISMA_QUERY_ENGINE_LIBRARY: process.execPath,
          PRISMA_HIDE_UPDATE_MESSAGE: '1',
        },
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return stdout;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** True when a diff script contains no statement (Prisma prints a comment for an empty diff). */
export function isEmptyDiff(script: string): boolean {
  return script
    .split('\n')
    .map((line) => line.trim())
    .every((line) => line === '' || line.startsWith('--'));
}

/** Prisma 6's schema parser requires `url` in the datasource block, which Prisma 7 forbids. */
async function withDatasourceUrl(datamodel: string, target: string): Promise<string> {
  const source = datamodel.includes('\n') ? datamodel : await readFile(datamodel, 'utf8');
  const patched = source.replace(/(datasource\s+\w+\s*\{[^}]*?provider\s*=\s*"[^"]+")/, '$1\n  url = env("DATABASE_URL")');
  await writeFile(target, patched);
  return target;
}
