/** Per-request servers of stateless HTTP hold only what their request can reach (src/mcp-server.ts). */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createLogger } from '@repo/http';
import { InboxApiClient } from '../src/api-client.js';
import { createMcpServer, reachOf, type ServerReach, WHOLE_SERVER } from '../src/mcp-server.js';
import { TEST_TASK_KEY } from './support/task-key.js';

describe('what a stateless request reaches', () => {
  it('is the called tool for tools/call', () => {
    expect(reachOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_messages', arguments: {} } })).toEqual({
      tools: ['list_messages'],
      resources: false,
    });
  });

  it('is the resources for the resource methods, and neither tools nor resources for the task methods', () => {
    for (const method of ['resources/list', 'resources/templates/list', 'resources/read']) {
      expect(reachOf({ jsonrpc: '2.0', id: 1, method, params: {} })).toEqual({ tools: [], resources: true });
    }
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect(reachOf({ jsonrpc: '2.0', id: 1, method, params: { taskId: 't' } })).toEqual({ tools: [], resources: false });
    }
  });

  it('is the whole server for anything else: listing, initialize, batches, a call without a tool name, no JSON-RPC', () => {
    const whole = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search' } }],
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7 } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call' },
      null,
      'tools/call',
    ];
    for (const message of whole) expect(reachOf(message)).toBe(WHOLE_SERVER);
  });
});

describe('a server built for what a request reaches', () => {
  const deps = {
    api: new InboxApiClient({ baseUrl: 'http://127.0.0.1:9' }),
    logger: createLogger({ service: 'inbox-mcp', level: 'silent' }),
    taskKey: TEST_TASK_KEY,
  };
  const clients: Client[] = [];
  afterAll(() => Promise.all(clients.map((client) => client.close())));

  async function connect(reach: ServerReach): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(deps, reach).connect(serverSide);
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  }
  const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
  const templateNames = async (client: Client) =>
    (await client.listResourceTemplates()).resourceTemplates.map((template) => template.name);

  it('has, for a call of any tool of the whole server, that tool', async () => {
    const all = await toolNames(await connect(WHOLE_SERVER));
    expect(all).toHaveLength(18);
    for (const name of all) {
      const tools = await toolNames(await connect(reachOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } })));
      expect(tools).toContain(name);
      expect(tools.length).toBeLessThan(all.length);
    }
  });

  it('has the resources for a resource method, and neither tools nor resources for a task method', async () => {
    const whole = await templateNames(await connect(WHOLE_SERVER));
    const resources = await connect(
      reachOf({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'email://thread/t' } }),
    );
    expect(await templateNames(resources)).toEqual(whole);
    expect(await toolNames(resources)).toEqual([]);
    const tasks = await connect(reachOf({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 't' } }));
    expect(await toolNames(tasks)).toEqual([]);
    expect(await templateNames(tasks)).toEqual([]);
  });
});
