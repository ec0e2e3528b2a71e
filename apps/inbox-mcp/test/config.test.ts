import { configProblems, documentSettings, renderSettingsTable } from '@repo/config';
import { readmeSection } from '@repo/testing';
import { configSchema, parseCommandLine, serviceConfigSchema, UsageError } from '../src/config.js';

describe('configuration', () => {
  it('is documented in README.md, variable by variable (regenerate with `pnpm docs:config`)', async () => {
    expect(await readmeSection('config:inbox-mcp')).toBe(renderSettingsTable(documentSettings(configSchema)));
  });
});

describe('command-line flags', () => {
  const env = { PORT: '8200', SERVICE_API_URL: 'http://127.0.0.1:8000' };

  it.each<[string, string[], Record<string, string>]>([
    ['none', [], {}],
    [
      'each flag',
      ['--transport', 'sse', '--host', '0.0.0.0', '--port', '9000'],
      { MCP_TRANSPORT: 'sse', HOST: '0.0.0.0', PORT: '9000' },
    ],
    ['flags with =', ['--transport=http', '--port=0'], { MCP_TRANSPORT: 'http', PORT: '0' }],
    // `pnpm start -- --port 9000` runs the script's command with `-- --port 9000` after its own flags.
    ['flags after --', ['--transport', 'http', '--', '--port', '9000'], { MCP_TRANSPORT: 'http', PORT: '9000' }],
    [
      'a flag given again after --, the last one winning',
      ['--transport', 'http', '--', '--transport', 'sse'],
      { MCP_TRANSPORT: 'sse' },
    ],
  ])('override their settings: %s', (_case, argv, overrides) => {
    expect(parseCommandLine(argv, env)).toEqual({ env: { ...env, ...overrides }, allowAnonymous: false });
  });

  it.each([
    [['--allow-anonymous'], {}],
    [['--transport', 'http', '--', '--allow-anonymous', '--port', '0'], { MCP_TRANSPORT: 'http', PORT: '0' }],
    [['--allow-anonymous', '--allow-anonymous'], {}],
  ])('take --allow-anonymous as a switch that sets no variable: %j', (argv, overrides) => {
    expect(parseCommandLine(argv, env)).toEqual({ env: { ...env, ...overrides }, allowAnonymous: true });
  });

  it('has no environment variable for --allow-anonymous: callers without a key are allowed on the command line only', () => {
    expect(parseCommandLine([], { ...env, ALLOW_ANONYMOUS: 'true', MCP_ALLOW_ANONYMOUS: 'true' }).allowAnonymous).toBe(false);
    expect(Object.keys(configSchema.shape).filter((name) => /ANONYMOUS/.test(name))).toEqual([]);
  });

  it.each([
    [['--prot', '9000'], 'unknown option --prot'],
    [['-p', '9000'], 'unknown option -p'],
    [['--constructor', 'x'], 'unknown option --constructor'],
    [['9000'], 'unexpected argument "9000"'],
    [['--', 'http'], 'unexpected argument "http"'],
    [['--port', '9000', 'extra'], 'unexpected argument "extra"'],
    [['--port'], '--port needs a value'],
    [['--port='], '--port needs a value'],
    [['--port', 'abc'], '--port must be an integer from 0 to 65535 (got "abc")'],
    [['--port', '70000'], '--port must be an integer from 0 to 65535 (got "70000")'],
    [['--transport', 'pigeon'], '--transport must be one of stdio, sse, http (got "pigeon")'],
    [['--transport', '--port', '9000'], '--transport must be one of stdio, sse, http (got "--port")'],
    [['--allow-anonymous=true'], '--allow-anonymous takes no value'],
    [['--allow-anonymous='], '--allow-anonymous takes no value'],
    [['--allow-anonymous', 'yes'], 'unexpected argument "yes"'],
    [['--allow-anon'], 'unknown option --allow-anon'],
    [['--no-allow-anonymous'], 'unknown option --no-allow-anonymous'],
  ])('refuse %j with a UsageError: %s', (argv, message) => {
    expect(() => parseCommandLine(argv, env)).toThrow(UsageError);
    expect(() => parseCommandLine(argv, env)).toThrow(new UsageError(message));
  });
});

describe('the task key', () => {
  const deployment = { MCP_TRANSPORT: 'http', HOST: '0.0.0.0' };

  it('is required of a deployment reachable beyond loopback, naming the variable', () => {
    expect(configProblems(serviceConfigSchema, deployment)).toEqual([
      'INBOX_MCP_TASK_KEY is required when HOST is not a loopback address (0.0.0.0): every replica needs the same key',
    ]);
    expect(configProblems(serviceConfigSchema, { ...deployment, INBOX_MCP_TASK_KEY: 'a secret' })).toEqual([]);
  });

  it('may be left to the generated one over stdio and on loopback', () => {
    expect(configProblems(serviceConfigSchema, { MCP_TRANSPORT: 'stdio', HOST: '0.0.0.0' })).toEqual([]);
    expect(configProblems(serviceConfigSchema, { MCP_TRANSPORT: 'http' })).toEqual([]);
  });
});
