import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { entryCommand, runToExit, startService } from '@repo/testing';
import { USAGE } from '../src/config.js';
import { appRoot } from '../src/paths.js';

const entry = 'src/main.ts';

describe('inbox-mcp process', () => {
  it('speaks MCP over stdio by default, keeping logs off stdout', async () => {
    const transport = new StdioClientTransport({
      ...entryCommand(entry),
      cwd: appRoot,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('inbox-mcp');
    await client.close();
  });

  it('serves streamable HTTP with --transport http and stops cleanly on SIGTERM', async () => {
    const service = await startService(entry, {
      cwd: appRoot,
      env: { PORT: undefined },
      args: ['--transport', 'http', '--port', '0'],
    });
    expect(await (await fetch(`${service.url}/health`)).json()).toEqual({ status: 'ok' });
    expect(await service.stop('SIGTERM')).toBe(0);
  });

  it('refuses an unknown transport with one line naming the flag, and exit code 2', async () => {
    const result = await runToExit(entry, { cwd: appRoot, env: {}, args: ['--transport', 'pigeon'] });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `inbox-mcp: --transport must be one of stdio, sse, http (got "pigeon") (${USAGE})\n`,
    });
  });

  it('stops with one line naming the variable when the configuration is bad', async () => {
    const result = await runToExit(entry, { cwd: appRoot, env: { PORT: 'abc' }, args: ['--transport', 'http'] });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")\n');
  });
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'process-test', version: '1' } },
};

/** POST /mcp with an initialize request and no Authorization header. */
const initializeWithoutKey = (url: string) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(initialize),
  });

// As users run it: built, through `pnpm start`, which passes flags after a `--`.
describe('inbox-mcp built', () => {
  const built = 'dist/main.js';
  // The pnpm running this test (set for the scripts it runs).
  const pnpm = process.env.npm_execpath;

  beforeAll(() => {
    if (!pnpm) throw new Error('run the tests through pnpm (npm_execpath is unset)');
    execFileSync(process.execPath, [pnpm, 'run', 'build'], { cwd: appRoot, stdio: 'ignore' });
  }, 300_000);

  it('takes flags after a --', async () => {
    const service = await startService(built, {
      built: true,
      cwd: appRoot,
      env: { PORT: undefined, MCP_TRANSPORT: undefined },
      args: ['--transport', 'http', '--', '--port', '0'],
    });
    expect(await (await fetch(`${service.url}/health`)).json()).toEqual({ status: 'ok' });
    expect(await service.stop('SIGTERM')).toBe(0);
  });

  it('answers a request without a key with 401 and the challenge, and serves the metadata it names', async () => {
    const service = await startService(built, {
      built: true,
      cwd: appRoot,
      env: { PORT: undefined, MCP_TRANSPORT: undefined, PUBLIC_BASE_URL: undefined },
      args: ['--transport', 'http', '--', '--port', '0'],
    });
    try {
      expect(service.logs.find((line) => line.msg === 'starting')).toMatchObject({ callers: 'key required' });
      const res = await initializeWithoutKey(service.url);
      expect(res.status).toBe(401);
      const metadataUrl = `${service.url}/.well-known/oauth-protected-resource`;
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
      expect(await (await fetch(metadataUrl)).json()).toMatchObject({
        resource: `${service.url}/mcp`,
        bearer_methods_supported: ['header'],
      });
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }
  });

  it('answers callers without a key with --allow-anonymous', async () => {
    const service = await startService(built, {
      built: true,
      cwd: appRoot,
      env: { PORT: undefined, MCP_TRANSPORT: undefined },
      args: ['--transport', 'http', '--', '--allow-anonymous', '--port', '0'],
    });
    try {
      expect(service.logs.find((line) => line.msg === 'starting')).toMatchObject({ callers: 'key, or none (--allow-anonymous)' });
      const res = await initializeWithoutKey(service.url);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('"serverInfo":{"name":"inbox-mcp"');
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }
  });

  it.each([
    [['--allow-anonymous=yes'], '--allow-anonymous takes no value'],
    [['--prot', '9000'], 'unknown option --prot'],
    [['--transport', 'http', '--', '--port', '9000', 'now'], 'unexpected argument "now"'],
    [['--port'], '--port needs a value'],
    [['--', '--port', 'abc'], '--port must be an integer from 0 to 65535 (got "abc")'],
  ])('answers %j with one line and exit code 2', async (args, message) => {
    const result = await runToExit(built, { built: true, cwd: appRoot, env: {}, args });
    expect(result).toEqual({ code: 2, stdout: '', stderr: `inbox-mcp: ${message} (${USAGE})\n` });
  });

  it('starts with `pnpm --filter ./apps/inbox-mcp start -- --port 0 --allow-anonymous`', async () => {
    const service = await startService(pnpm!, {
      built: true,
      cwd: path.resolve(appRoot, '../..'),
      env: { PORT: undefined, HOST: undefined },
      args: ['--filter', './apps/inbox-mcp', 'start', '--', '--port', '0', '--allow-anonymous'],
      timeoutMs: 180_000,
    });
    expect(await (await fetch(`${service.url}/health`)).json()).toEqual({ status: 'ok' });
    expect((await initializeWithoutKey(service.url)).status).toBe(200);
    // pnpm hands the signal on to the server, which stops cleanly.
    expect(await service.stop('SIGTERM')).toBe(0);
  }, 240_000);
});
