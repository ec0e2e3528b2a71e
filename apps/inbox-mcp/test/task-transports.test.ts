/**
 * `wait_for_reply` as a 2025-11-25 task over the transports other than streamable HTTP
 * (tasks.test.ts): stdio and legacy SSE, with SDK v1's client and its own transports, against
 * inbox-mcp processes started as `pnpm dev` runs them and a real inbox-api. Over stdio a task
 * outlives its process: a new one with the same INBOX_MCP_TASK_KEY answers for it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { entryCommand, startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { type Correspondence, type InboxApi, startCorrespondence, startInboxApi } from './support/inbox-api.js';

jest.setTimeout(180_000);

const KEY = 'task-transports-key-0123456789';
const OTHER_KEY = 'task-transports-key-other-0123';
const TASK_KEY_SETTING = 'inbox-mcp task transports test secret';
const ENTRY = 'src/main.ts';

let inboxApi: InboxApi;
let correspondence: Correspondence;
const clients: Client[] = [];
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  inboxApi = await startInboxApi('mcp_task_transports', { apiKeys: [KEY, OTHER_KEY] });
  correspondence = await startCorrespondence(inboxApi, KEY);
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const stop of stops) await stop();
  await inboxApi?.stop();
});

const structured = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, unknown>;

async function connect(transport: StdioClientTransport | SSEClientTransport): Promise<Client> {
  const client = new Client({ name: 'task-transports', version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A client of its own inbox-mcp process over stdio, which acts with SERVICE_API_KEY; closing the client ends the process. */
function connectStdio(serviceKey = KEY): Promise<Client> {
  return connect(
    new StdioClientTransport({
      ...entryCommand(ENTRY),
      cwd: appRoot,
      env: {
        SERVICE_API_URL: inboxApi.url,
        SERVICE_API_KEY: serviceKey,
        INBOX_MCP_TASK_KEY: TASK_KEY_SETTING,
        LOG_LEVEL: 'warn',
      },
      stderr: 'inherit',
    }),
  );
}

async function startSse(): Promise<string> {
  const started = await startService(ENTRY, {
    cwd: appRoot,
    env: { PORT: undefined, SERVICE_API_URL: inboxApi.url, LOG_LEVEL: 'info', INBOX_MCP_TASK_KEY: TASK_KEY_SETTING },
    args: ['--transport', 'sse', '--port', '0'],
  });
  stops.push(() => started.stop());
  return started.url;
}

const connectSse = (url: string) =>
  connect(new SSEClientTransport(new URL(`${url}/sse`), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));

/** `tools/call` of wait_for_reply asking for a task: the task, at once. */
async function createWaitTask(client: Client, threadId: string) {
  const { task } = await client.request(
    {
      method: 'tools/call',
      params: { name: 'wait_for_reply', arguments: { thread_id: threadId, timeout_seconds: 120 }, task: { ttl: 60_000 } },
    },
    CreateTaskResultSchema,
  );
  expect(task).toMatchObject({ status: 'working', pollInterval: 5000, ttl: 120_000 + 3_600_000 });
  return task.taskId;
}

/** The whole life of a task on one client: working, then completed by bob's reply, with the reply as its result. */
async function taskLifeCycle(client: Client, poller: Client, subject: string) {
  const { threadId, bobThreadId } = await correspondence.newThread(subject);
  const taskId = await createWaitTask(client, threadId);
  expect(await poller.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'working' });
  await correspondence.reply(bobThreadId, `Yes to ${subject}`);
  expect(await poller.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  expect(structured(result)).toMatchObject({
    status: 'replied',
    thread_id: threadId,
    message: { direction: 'inbound', from_address: correspondence.bob.email_address, content_clean: `Yes to ${subject}` },
  });
  expect(result._meta).toMatchObject({ 'io.modelcontextprotocol/related-task': { taskId } });
}

describe('2025-11-25 tasks over stdio', () => {
  it('declares task support, and runs a task from creation to the reply', async () => {
    const client = await connectStdio();
    expect(client.getServerCapabilities()?.tasks).toEqual({ requests: { tools: { call: {} } } });
    await taskLifeCycle(client, client, 'stdio');
  });

  it('answers tasks/result, asked before the reply, with the reply', async () => {
    const { threadId, bobThreadId } = await correspondence.newThread('stdio held');
    const client = await connectStdio();
    const waiting = client.experimental.tasks.getTaskResult(await createWaitTask(client, threadId), CallToolResultSchema);
    await correspondence.reply(bobThreadId, 'Held.');
    expect(structured(await waiting)).toMatchObject({ status: 'replied', message: { content_clean: 'Held.' } });
  });

  it('answers for a task made by a stdio process that has ended, from a new one with the same task key and service key', async () => {
    const { threadId, bobThreadId } = await correspondence.newThread('stdio restart');
    const before = await connectStdio();
    const taskId = await createWaitTask(before, threadId);
    await before.close();
    await correspondence.reply(bobThreadId, 'After the restart.');
    const after = await connectStdio();
    expect(await after.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
    expect(structured(await after.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toMatchObject({
      status: 'replied',
      message: { content_clean: 'After the restart.' },
    });
    const other = await connectStdio(OTHER_KEY);
    await expect(other.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
  });
});

describe('2025-11-25 tasks over legacy SSE', () => {
  let url: string;
  beforeAll(async () => {
    url = await startSse();
  });

  it('declares task support, and runs a task from creation to the reply, polled from another session', async () => {
    const client = await connectSse(url);
    expect(client.getServerCapabilities()?.tasks).toEqual({ requests: { tools: { call: {} } } });
    await taskLifeCycle(client, await connectSse(url), 'sse');
  });

  it('answers tasks/result, asked before the reply, with the reply', async () => {
    const { threadId, bobThreadId } = await correspondence.newThread('sse held');
    const client = await connectSse(url);
    const waiting = client.experimental.tasks.getTaskResult(await createWaitTask(client, threadId), CallToolResultSchema);
    await correspondence.reply(bobThreadId, 'Held.');
    expect(structured(await waiting)).toMatchObject({ status: 'replied', message: { content_clean: 'Held.' } });
  });
});
