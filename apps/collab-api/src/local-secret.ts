import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AuthSettings } from './auth/settings.js';
import { type Config, generatesLocalSecret } from './config.js';

/** Where the development secret lives inside DATA_DIR. */
export function localSecretFile(dataDir: string): string {
  return path.join(dataDir, 'jwt-secret');
}

/**
 * The auth settings tokens are verified (and, by the CLI, minted) with. When the configuration
 * asks for a generated secret (see generatesLocalSecret), it is read from DATA_DIR, or created
 * there on first use, readable by this user only, so the server and the CLI agree on it and
 * tokens outlive restarts.
 */
export async function resolveAuthSettings(
  config: Config,
  dataDir: string,
): Promise<AuthSettings & { generatedSecretFile?: string }> {
  if (!generatesLocalSecret(config)) return config;
  const file = localSecretFile(dataDir);
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  let secret = existing?.trim();
  if (!secret) {
    secret = randomBytes(32).toString('hex');
    await mkdir(dataDir, { recursive: true });
    // `wx`: if another process created the file meanwhile, keep its secret rather than ours.
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
      secret = (await readFile(file, 'utf8')).trim();
    });
  }
  return { ...config, COLLAB_JWT_SECRET: secret, generatedSecretFile: file };
}
