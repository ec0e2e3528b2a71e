import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { entryCommand, runToExit, startService } from '@repo/testing';
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

  it('refuses an unknown transport with one line naming the setting', async () => {
    const result = await runToExit(entry, { cwd: appRoot, env: {}, args: ['--transport', 'pigeon'] });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('Invalid configuration: MCP_TRANSPORT must be one of stdio, sse, http (got "pigeon")\n');
  });

  it('stops with one line naming the variable when the configuration is bad', async () => {
    const result = await runToExit(entry, { cwd: appRoot, env: { PORT: 'abc' }, args: ['--transport', 'http'] });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")\n');
  });
});
