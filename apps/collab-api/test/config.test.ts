import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { configProblems, documentSettings, loadConfig, renderSettingsTable } from '@repo/config';
import { readmeSection } from '@repo/testing';
import { configSchema } from '../src/config.js';
import { localSecretFile, resolveAuthSettings } from '../src/local-secret.js';

const DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/collab';

const problemsOf = (env: Record<string, string>) => configProblems(configSchema, env);

describe('configuration', () => {
  it('is documented in README.md, variable by variable (regenerate with `pnpm docs:config`)', async () => {
    expect(await readmeSection('config:collab-api')).toBe(renderSettingsTable(documentSettings(configSchema)));
  });

  it('needs no token settings on the embedded database, and a secret or a JWKS URL with DATABASE_URL', () => {
    expect(problemsOf({})).toEqual([]);
    expect(problemsOf({ DATABASE_URL })).toEqual([
      "COLLAB_JWT_SECRET or COLLAB_JWKS_URL is required: a shared secret for HS256 tokens, or the identity provider's JWKS URL",
    ]);
    expect(problemsOf({ DATABASE_URL, COLLAB_JWKS_URL: 'https://idp.example.com/jwks.json' })).toEqual([]);
  });

  it('still checks the other token settings on the embedded database', () => {
    expect(problemsOf({ COLLAB_JWT_ALGORITHMS: 'RS256' })).toEqual([
      'COLLAB_JWT_ALGORITHMS may list only HS256, HS384, HS512 with COLLAB_JWT_SECRET, not RS256 (got "RS256")',
    ]);
    expect(problemsOf({ COLLAB_WAREHOUSE: 'bigquery' })).toHaveLength(1);
  });
});

describe('the development secret', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-secret-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('is generated once under DATA_DIR, readable by its owner only, and reused', async () => {
    const config = loadConfig(configSchema, { DATA_DIR: dataDir });
    const first = await resolveAuthSettings(config, dataDir);
    expect(first.COLLAB_JWT_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(first.generatedSecretFile).toBe(localSecretFile(dataDir));
    expect((await stat(localSecretFile(dataDir))).mode & 0o777).toBe(0o600);
    expect((await readFile(localSecretFile(dataDir), 'utf8')).trim()).toBe(first.COLLAB_JWT_SECRET);
    expect((await resolveAuthSettings(config, dataDir)).COLLAB_JWT_SECRET).toBe(first.COLLAB_JWT_SECRET);
  });

  it('is not used when a secret, a JWKS URL or a database is configured', async () => {
    for (const env of [{ COLLAB_JWT_SECRET: 'x'.repeat(32) }, { COLLAB_JWKS_URL: 'https://idp.example.com/jwks.json' }]) {
      const settings = await resolveAuthSettings(loadConfig(configSchema, { DATABASE_URL, ...env }), dataDir);
      expect(settings.generatedSecretFile).toBeUndefined();
    }
    await expect(stat(localSecretFile(dataDir))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
