import { spawnSync } from 'node:child_process';
import { z } from 'zod';
import { configProblems, documentSettings, httpSettings, loadConfig, setting, storageSettings } from '../src/index.js';

const schema = z.object({
  ...httpSettings({ port: 8000 }),
  ...storageSettings(),
  API_KEYS: setting.list().optional(),
  MODE: setting.oneOf(['local', 'smtp']).default('local'),
  SIGNING_SECRET: setting.string(),
});

const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

describe('loadConfig', () => {
  it('applies defaults and parses values', () => {
    const config = loadConfig(schema, { SIGNING_SECRET: 's', PORT: '9000', MIGRATE_ON_START: 'TRUE', API_KEYS: ' a, ,b ' });
    expect(config).toMatchObject({
      PORT: 9000,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: true,
      API_KEYS: ['a', 'b'],
      MODE: 'local',
    });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('names the variable, what it expects and what it got', () => {
    expect(problemsOf({ SIGNING_SECRET: 's', PORT: 'abc' })).toEqual(['PORT must be an integer from 0 to 65535 (got "abc")']);
    expect(problemsOf({ SIGNING_SECRET: 's', PORT: '70000' })).toEqual(['PORT must be an integer from 0 to 65535 (got "70000")']);
    expect(problemsOf({ SIGNING_SECRET: 's', MODE: 'pigeon' })).toEqual(['MODE must be one of local, smtp (got "pigeon")']);
    expect(problemsOf({ SIGNING_SECRET: 's', DATABASE_URL: 'mysql://x' })).toEqual([
      'DATABASE_URL must be a postgres or postgresql URL (got "mysql://x")',
    ]);
  });

  it('reports missing required variables and every problem at once', () => {
    expect(problemsOf({ MIGRATE_ON_START: 'maybe' })).toEqual([
      'MIGRATE_ON_START must be true or false (got "maybe")',
      'SIGNING_SECRET is required: a non-empty string',
    ]);
  });

  it('treats an empty value as unset, so an empty ConfigMap entry means the default', () => {
    const config = loadConfig(schema, { SIGNING_SECRET: 's', PORT: '', DATABASE_URL: '' });
    expect(config.PORT).toBe(8000);
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('never echoes the value of a secret', () => {
    const secretSchema = z.object({ COLLAB_JWT_SECRET: setting.integer() });
    expect(() => loadConfig(secretSchema, { COLLAB_JWT_SECRET: 'hunter2' })).toThrow(
      'COLLAB_JWT_SECRET must be an integer (value hidden)',
    );
  });

  it('never echoes a password inside a URL', () => {
    expect(problemsOf({ SIGNING_SECRET: 's', DATABASE_URL: 'mysql://admin:hunter2@db:3306/x' })).toEqual([
      'DATABASE_URL must be a postgres or postgresql URL (got "mysql://admin:***@db:3306/x")',
    ]);
  });

  it('strips a trailing slash from URLs so links can be joined safely', () => {
    expect(loadConfig(schema, { SIGNING_SECRET: 's', PUBLIC_BASE_URL: 'https://api.example.com/' }).PUBLIC_BASE_URL).toBe(
      'https://api.example.com',
    );
  });
});

describe('loadConfigOrExit', () => {
  it('stops the process with one line naming the variable', () => {
    const script = `
      import { z } from 'zod';
      import { loadConfigOrExit, httpSettings } from '@repo/config';
      loadConfigOrExit(z.object(httpSettings({ port: 8000 })));
      console.log('started');
    `;
    const run = spawnSync(
      process.execPath,
      ['--conditions=@repo/source', '--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: __dirname,
        env: { ...process.env, PORT: 'abc' },
        encoding: 'utf8',
      },
    );
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")\n');
  });
});

describe('documentSettings', () => {
  it('lists each variable with what it expects, its default and its description', () => {
    const docs = documentSettings(schema);
    expect(docs.find((doc) => doc.name === 'PORT')).toEqual({
      name: 'PORT',
      expects: 'an integer from 0 to 65535',
      default: '8000',
      required: false,
      description: 'TCP port to listen on (0: any free port).',
    });
    expect(docs.find((doc) => doc.name === 'SIGNING_SECRET')).toMatchObject({ required: true, default: undefined });
    expect(docs.find((doc) => doc.name === 'DATABASE_URL')).toMatchObject({
      required: false,
      expects: 'a postgres or postgresql URL',
    });
  });
});
