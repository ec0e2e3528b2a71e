import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { reserveScratchDatabase } from '@repo/db/dev';
import { runToExit, startService } from './process.js';

/**
 * What every API process must do, as settled in the contract's Operations section: start on an
 * embedded database when DATABASE_URL is unset, create and migrate DATABASE_URL when asked to,
 * stop cleanly on SIGTERM, and refuse a bad configuration with one line naming the variable.
 * `env` is added to every process's environment (a variable the service needs besides those the
 * checks set; the checks' own settings win).
 */
export function describeApiProcess(
  name: string,
  options: { appRoot: string; entry?: string; env?: Record<string, string | undefined> },
): void {
  const entry = options.entry ?? 'src/server.ts';
  const cwd = options.appRoot;
  const env = options.env ?? {};

  describe(`${name} process`, () => {
    // Starting a process, and the embedded database's first initialisation, take a while on a busy machine.
    jest.setTimeout(120_000);

    it('starts on an embedded database when DATABASE_URL is unset, serves, and stops cleanly on SIGTERM', async () => {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), `${name}-data-`));
      try {
        const service = await startService(entry, {
          cwd,
          env: { ...env, PORT: '0', DATA_DIR: dataDir, DATABASE_URL: undefined },
          timeoutMs: 90_000,
        });
        expect(await (await fetch(`${service.url}/health`)).json()).toEqual({ status: 'ok' });
        expect(await (await fetch(`${service.url}/ready`)).json()).toEqual({ status: 'ready' });
        expect(service.logs.some((line) => line.msg === 'applied migration')).toBe(true);
        expect(await service.stop('SIGTERM')).toBe(0);
        expect(service.logs.map((line) => line.msg)).toContain('stopped');
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it('with DATABASE_URL and MIGRATE_ON_START, creates and migrates that database', async () => {
      const database = await reserveScratchDatabase(`${name}_start`);
      try {
        const service = await startService(entry, {
          cwd,
          env: { ...env, PORT: '0', DATABASE_URL: database.url, MIGRATE_ON_START: 'true' },
        });
        expect((await fetch(`${service.url}/ready`)).status).toBe(200);
        expect(await service.stop()).toBe(0);
      } finally {
        await database.drop();
      }
    });

    it('stops with one line naming the variable when the configuration is bad', async () => {
      const result = await runToExit(entry, { cwd, env: { ...env, PORT: 'abc' } });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")\n');
    });
  });
}
