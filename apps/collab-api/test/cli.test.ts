import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runToExit, startService } from '@repo/testing';
import { USAGE } from '../src/cli/arguments.js';
import { appRoot } from '../src/paths.js';
import { as, createTestContext, TEST_SECRET, type TestContext } from './context.js';

// As users run it: the built dist/cli.js (`pnpm --filter collab-api cli`), built once for this file.
const cli = (args: string[], env: Record<string, string | undefined>) =>
  runToExit('dist/cli.js', { cwd: appRoot, args, env, built: true });
beforeAll(async () => {
  await promisify(execFile)('pnpm', ['exec', 'tsc', '-b', 'tsconfig.build.json'], { cwd: appRoot });
}, 300_000);
const bootstrapArgs = (sub: string) => [
  'bootstrap',
  '--tenant-name',
  'Acme',
  '--admin-email',
  'Ada@Example.com',
  '--admin-sub',
  sub,
];

describe('cli with DATABASE_URL and COLLAB_JWT_SECRET', () => {
  let ctx: TestContext;
  let env: Record<string, string>;
  beforeAll(async () => {
    ctx = await createTestContext();
    env = { DATABASE_URL: ctx.databaseUrl, COLLAB_JWT_SECRET: TEST_SECRET, DATA_DIR: ctx.dataDir };
  });
  afterAll(() => ctx.close());

  it('bootstraps a tenant, mints a token for its admin, and the API accepts it', async () => {
    const bootstrap = await cli(bootstrapArgs('idp|ada'), env);
    expect(bootstrap.code).toBe(0);
    expect(bootstrap.stdout).toMatch(/^\{"tenant_id": "[0-9a-f-]{36}", "user_id": "[0-9a-f-]{36}"\}\n$/);
    const { tenant_id, user_id } = JSON.parse(bootstrap.stdout);

    const minted = await cli(['token', '--sub', 'idp|ada', '--ttl', '120'], env);
    expect(minted.code).toBe(0);
    const token = minted.stdout.trim();
    expect(minted.stdout).toBe(`${token}\n`);

    const admin = as(ctx.app, token);
    expect((await admin.get('/api/v1/users/me')).body).toMatchObject({
      id: user_id,
      tenant_id,
      email: 'ada@example.com',
      role: 'Org admin',
      identity_provider_id: 'idp|ada',
    });
    expect((await admin.get(`/api/v1/tenants/${tenant_id}`)).body).toMatchObject({ id: tenant_id, name: 'Acme' });
  });

  it('mints platform-operator tokens with an e-mail', async () => {
    const minted = await cli(['token', '--sub', 'idp|operator', '--platform-admin', '--email', 'ops@example.com'], env);
    const [, payload] = minted.stdout.trim().split('.');
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toMatchObject({
      sub: 'idp|operator',
      platform_admin: true,
      email: 'ops@example.com',
      email_verified: true,
    });
    expect((await as(ctx.app, minted.stdout.trim()).get('/api/v1/tenants')).status).toBe(200);
  });

  it('answers through scripts/collab, the way around pnpm, as through pnpm', async () => {
    const { stdout } = await promisify(execFile)(path.join(appRoot, '../../scripts/collab'), ['token', '--sub', 'ada'], {
      env: { ...process.env, ...env },
    });
    const [, payload] = stdout.trim().split('.');
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toMatchObject({ sub: 'ada' });
  });

  it('refuses to link an identity that already has a user (exit 1)', async () => {
    await cli(bootstrapArgs('idp|twice'), env);
    const again = await cli(bootstrapArgs('idp|twice'), env);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 1, stdout: '' });
    expect(again.stderr).toContain('The identity idp|twice is already linked to a user\n');
  });

  it('refuses to mint tokens when tokens come from an identity provider (exit 1)', async () => {
    const result = await cli(['token', '--sub', 'x'], {
      ...env,
      COLLAB_JWT_SECRET: undefined,
      COLLAB_JWKS_URL: 'https://idp.example.com/jwks.json',
    });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "cli token mints HS256 tokens for local use, but COLLAB_JWKS_URL is set: this service accepts only the identity provider's tokens.\n",
    });
  });

  it.each([
    [[], 'no command given'],
    [['nope'], 'unknown command "nope"'],
    [['--tenant-name', 'x'], 'unknown command "--tenant-name"'],
    [['help', 'nope'], 'unknown command "nope"'],
    [['token', '--sub', 's', '--ttl', 'soon'], '--ttl must be a whole number of seconds'],
    [['token', '--sub', 's', '--colour'], "Unknown option '--colour'"],
    [['bootstrap', '--tenant-name', 'Acme'], '--admin-email is required'],
  ])('answers %j with one line and exit code 2', async (args, message) => {
    const result = await cli(args, env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^[^\n]*\n$/);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('cli --help');
  });

  it.each([[['--help']], [['-h']], [['help']]])('prints the usage for %j and exits 0', async (args) => {
    expect(await cli(args, env)).toEqual({ code: 0, stdout: `${USAGE}\n`, stderr: '' });
  });

  it.each([
    [['help', 'token'], 'token'],
    [['token', '--help'], 'token'],
    [['help', 'bootstrap'], 'bootstrap'],
    [['bootstrap', '-h'], 'bootstrap'],
  ])('prints the usage of one command for %j and exits 0', async (args, command) => {
    const result = await cli(args, env);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')[0]).toMatch(new RegExp(`^usage: cli ${command} --`));
  });
});

describe('cli on the embedded database, with no configuration', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-cli-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('bootstraps and mints a token that the server started on the same data folder accepts', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: undefined, COLLAB_JWT_SECRET: undefined, COLLAB_JWKS_URL: undefined };
    const bootstrap = await cli(bootstrapArgs('idp|local'), env);
    expect(bootstrap.code).toBe(0);
    const { user_id } = JSON.parse(bootstrap.stdout);
    const token = (await cli(['token', '--sub', 'idp|local'], env)).stdout.trim();

    const server = await startService('src/server.ts', { cwd: appRoot, env: { ...env, PORT: '0' } });
    try {
      expect(server.logs).toContainEqual(
        expect.objectContaining({ level: 'warn', secretFile: path.join(dataDir, 'jwt-secret') }),
      );
      const me = async () => {
        const res = await fetch(`${server.url}/api/v1/users/me`, { headers: { Authorization: `Bearer ${token}` } });
        return { status: res.status, id: ((await res.json()) as { id?: string }).id };
      };
      expect(await me()).toEqual({ status: 200, id: user_id });
      // pg closes a connection idle for 10 s; the next one meets the statements the first prepared in
      // PGlite's one session, which answered 500 on every request from then on.
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      expect(await me()).toEqual({ status: 200, id: user_id });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 90_000);

  it('bootstraps through the server while it runs, instead of opening the database files a second time', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: undefined, COLLAB_JWT_SECRET: undefined, COLLAB_JWKS_URL: undefined };
    const server = await startService('src/server.ts', { cwd: appRoot, env: { ...env, PORT: '0' } });
    try {
      const bootstrap = await cli(bootstrapArgs('idp|while-running'), env);
      expect(bootstrap.code).toBe(0);
      expect(bootstrap.stderr).toContain('using the embedded database served by another process');
      const token = (await cli(['token', '--sub', 'idp|while-running'], env)).stdout.trim();

      const me = await fetch(`${server.url}/api/v1/users/me`, { headers: { Authorization: `Bearer ${token}` } });
      expect({ status: me.status, id: ((await me.json()) as { id: string }).id }).toEqual({
        status: 200,
        id: JSON.parse(bootstrap.stdout).user_id,
      });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 90_000);
});
