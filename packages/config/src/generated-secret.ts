import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A random secret kept in `file`, for a secret setting left unset in development: created on
 * first use, readable by this user only, and read again by every later process that uses the same
 * file (the service after a restart, its replicas on the same data folder).
 */
export async function generatedSecret(file: string): Promise<string> {
  const existing = await readSecret(file);
  if (existing) return existing;
  const secret = randomBytes(32).toString('base64url');
  await mkdir(path.dirname(file), { recursive: true });
  // Written aside, then linked into place: no reader sees a half-written file, and when another
  // process got there first (EEXIST), its secret is the one to use.
  const draft = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(draft, `${secret}\n`, { mode: 0o600 });
  try {
    await link(draft, file);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(draft, { force: true });
  }
  const theirs = await readSecret(file);
  if (!theirs) throw new Error(`${file} holds no secret: remove it, or write one in it`);
  return theirs;
}

async function readSecret(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
