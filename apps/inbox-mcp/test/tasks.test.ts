/**
 * `wait_for_reply` as a durable task, end to end: the SDK v1 client (2025-11-25 experimental
 * tasks) and the SDK v2 client (2026-07-28, the tasks extension) against inbox-mcp processes
 * started as `pnpm dev` runs them, on a real inbox-api. A task made by one process is read by
 * another, and by a process started after the first one stopped: nothing of it lives in memory.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { startService } from '@repo/testing';
import { z } from 'zod';
import { appRoot } from '../src/paths.js';
import { TASKS_EXTENSION } from '../src/tasks/task-protocol.js';
import { callWithKey, type Correspondence, type InboxApi, startCorrespondence, startInboxApi } from './support/inbox-api.js';

jest.setTimeout(180_000);

const KEY = 'tasks-key-a-0123456789';
const OTHER_KEY = 'tasks-key-b-0123456789';
const TASK_KEY_SETTING = 'inbox-mcp tasks test secret';
const UNKNOWN_TASK = -32602;

type McpProcess = Awaited<ReturnType<typeof startService>>;
let inboxApi: InboxApi;
const processes: McpProcess[] = [];
const clients: { close(): Promise<void> }[] = [];
let correspondence: Correspondence;

function startMcp(): Promise<McpProcess> {
  return startService('src/main.ts', {
    cwd: appRoot,
    env: { PORT: undefined, SERVICE_API_URL: inboxApi.url, LOG_LEVEL: 'info', INBOX_MCP_TASK_KEY: TASK_KEY_SETTING },
    args: ['--transport', 'http', '--port', '0'],
  }).then((started) => {
    processes.push(started);
    return started;
  });
}

async function connectV1(mcp: McpProcess, key = KEY): Promise<Client> {
  const client = new Client({ name: 'tasks-v1', version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function connectV2(mcp: McpProcess, options: { tasks: boolean }): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'tasks-v2', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: options.tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {},
    },
  );
  await client.connect(
    new StreamableHTTPClientTransportV2(new URL(`${mcp.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${KEY}` } },
    }),
  );
  clients.push(client);
  return client;
}

/**
 * A 2026-07-28 request as the wire carries it. SDK v2's client refuses a `resultType: "task"`
 * answer (it runs no tasks), so the call that creates a task is made by hand.
 */
/** The Content-Type of each post2026 answer, in order. */
const contentTypes: (string | null)[] = [];

async function post2026(mcp: McpProcess, method: string, params: Record<string, unknown>) {
  const res = await fetch(`${mcp.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${KEY}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof params.name === 'string' && { 'mcp-name': params.name }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
        },
      },
    }),
  });
  const text = await res.text();
  contentTypes.push(res.headers.get('content-type'));
  const json = res.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)))
        .find((message) => 'result' in message || 'error' in message)
    : JSON.parse(text);
  return json as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

const taskResultSchema = z.looseObject({ taskId: z.string(), status: z.string(), result: z.looseObject({}).optional() });
const structured = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, unknown>;

beforeAll(async () => {
  inboxApi = await startInboxApi('mcp_tasks', { apiKeys: [KEY, OTHER_KEY] });
  correspondence = await startCorrespondence(inboxApi, KEY);
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const started of processes) await started.stop();
  await inboxApi?.stop();
});

describe('2025-11-25 tasks (SDK v1 client)', () => {
  let first: McpProcess;
  let second: McpProcess;
  beforeAll(async () => {
    [first, second] = await Promise.all([startMcp(), startMcp()]);
  });

  it('declares task support for wait_for_reply only, and tasks/cancel and tasks/list are not offered', async () => {
    const client = await connectV1(first);
    expect(client.getServerCapabilities()?.tasks).toEqual({ requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(tools.filter((tool) => tool.execution?.taskSupport).map((tool) => [tool.name, tool.execution])).toEqual([
      ['wait_for_reply', { taskSupport: 'optional' }],
    ]);
    await expect(client.experimental.tasks.listTasks()).rejects.toMatchObject({ code: -32601 });
  });

  it('returns a task at once; another process answers tasks/get; the reply completes it with the message', async () => {
    const { threadId, bobThreadId } = await correspondence.newThread('Lunch?');
    const creator = await connectV1(first);
    const created = await creator.request(
      {
        method: 'tools/call',
        params: { name: 'wait_for_reply', arguments: { thread_id: threadId, timeout_seconds: 120 }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    expect(created.task).toMatchObject({ status: 'working', pollInterval: 5000, ttl: 120_000 + 3_600_000 });
    const { taskId } = created.task;

    const poller = await connectV1(second);
    expect(await poller.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'working' });
    await expect(poller.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32601 });

    await correspondence.reply(bobThreadId, 'Noon works.');
    expect(await poller.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
    const result = await creator.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(structured(result)).toMatchObject({
      status: 'replied',
      thread_id: threadId,
      message: { direction: 'inbound', from_address: correspondence.bob.email_address, content_clean: 'Noon works.' },
    });
    expect(result._meta).toMatchObject({ 'io.modelcontextprotocol/related-task': { taskId } });
  });

  it('tasks/result waits for the reply (held open, as the tool waits)', async () => {
    const { threadId, bobThreadId } = await correspondence.newThread('Dinner?');
    const client = await connectV1(second);
    const stream = client.experimental.tasks.callToolStream(
      { name: 'wait_for_reply', arguments: { thread_id: threadId, timeout_seconds: 120 } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    const first = await stream.next();
    expect(first.value).toMatchObject({ type: 'taskCreated', task: { status: 'working' } });
    const waiting = client.experimental.tasks.getTaskResult(
      (first.value as { task: { taskId: string } }).task.taskId,
      CallToolResultSchema,
    );
    await correspondence.reply(bobThreadId, 'Seven.');
    expect(structured(await waiting)).toMatchObject({ status: 'replied', message: { content_clean: 'Seven.' } });
    await stream.return();
  });

  it('completes with the tool’s timed_out result when nothing arrives by the deadline (of a fractional timeout too)', async () => {
    const { threadId } = await correspondence.newThread('Anyone?');
    const client = await connectV1(first);
    const { task } = await client.request(
      {
        method: 'tools/call',
        params: { name: 'wait_for_reply', arguments: { thread_id: threadId, timeout_seconds: 1.0001 }, task: {} },
      },
      CreateTaskResultSchema,
    );
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'working' });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(structured(result)).toEqual({ status: 'timed_out', thread_id: threadId, waited_seconds: 1.001 });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed' });
  });

  it('refuses forged, altered and other keys’ task ids as unknown (invalid params)', async () => {
    const { threadId } = await correspondence.newThread('Secret?');
    const client = await connectV1(first);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'wait_for_reply', arguments: { thread_id: threadId }, task: {} } },
      CreateTaskResultSchema,
    );
    const altered = `${task.taskId.slice(0, -3)}${task.taskId.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    for (const taskId of ['w1.forged', 'not-a-task', altered]) {
      await expect(client.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: UNKNOWN_TASK });
      await expect(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toMatchObject({
        code: UNKNOWN_TASK,
      });
    }
    const other = await connectV1(second, OTHER_KEY);
    await expect(other.experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({ code: UNKNOWN_TASK });
    await expect(other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toMatchObject({
      code: UNKNOWN_TASK,
    });
  });

  it('loses nothing when the process that made the task stops and another starts', async () => {
    const { threadId, bobThreadId } = await correspondence.newThread('Still there?');
    const before = await startMcp();
    const { task } = await (
      await connectV1(before)
    ).request(
      { method: 'tools/call', params: { name: 'wait_for_reply', arguments: { thread_id: threadId }, task: {} } },
      CreateTaskResultSchema,
    );
    await before.stop();
    await correspondence.reply(bobThreadId, 'Yes.');
    const after = await connectV1(await startMcp());
    expect(await after.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed' });
    expect(structured(await after.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toMatchObject({
      status: 'replied',
      message: { content_clean: 'Yes.' },
    });
  });

  it('answers a JSON-RPC error, and makes no task, for a thread it cannot read; a task whose thread goes ends failed', async () => {
    const client = await connectV1(first);
    const callAsTask = (threadId: string) =>
      client.request(
        { method: 'tools/call', params: { name: 'wait_for_reply', arguments: { thread_id: threadId }, task: {} } },
        CreateTaskResultSchema,
      );
    await expect(callAsTask('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('wait_for_reply cannot start'),
      data: { error: { code: 'not_found' } },
    });
    // A thread of an inbox deleted while the task waits.
    const rest = (method: string, urlPath: string, body?: unknown) => callWithKey(inboxApi, KEY, method, urlPath, body);
    const doomed = await rest('POST', '/v1/inboxes', { name: 'Doomed', email_username: 'doomed-waiter' });
    const sent = await rest('POST', '/v1/messages', {
      inbox_id: doomed.id,
      to: [correspondence.bob.email_address],
      subject: 'Gone soon',
      body: 'b',
    });
    const { task } = await callAsTask(sent.thread_id);
    await rest('DELETE', `/v1/inboxes/${doomed.id}`);
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'failed' });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ error: { code: 'not_found' } });
  });

  it('runs the tool as before when no task is asked for', async () => {
    const { threadId } = await correspondence.newThread('Plain?');
    const client = await connectV1(first);
    const result = await client.callTool({ name: 'wait_for_reply', arguments: { thread_id: threadId, timeout_seconds: 1 } });
    expect(structured(result)).toMatchObject({ status: 'timed_out', thread_id: threadId });
  });
});

describe('2026-07-28 tasks extension (SDK v2 client)', () => {
  let first: McpProcess;
  let second: McpProcess;
  beforeAll(async () => {
    [first, second] = await Promise.all([startMcp(), startMcp()]);
  });

  it('advertises the extension, and refuses tasks/get to a request that does not declare it', async () => {
    const client = await connectV2(first, { tasks: false });
    const discovered = await client.discover();
    expect(discovered.capabilities.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    expect(discovered.capabilities).not.toHaveProperty('tasks');
    await expect(client.request({ method: 'tasks/get', params: { taskId: 'w1.x' } }, taskResultSchema)).rejects.toMatchObject({
      code: -32021,
    });
  });

  it('creates a task; another process answers tasks/get, inlining the result once the reply arrives', async () => {
    const { threadId, bobThreadId } = await correspondence.newThread('Tea?');
    const created = await post2026(first, 'tools/call', {
      name: 'wait_for_reply',
      arguments: { thread_id: threadId, timeout_seconds: 120 },
    });
    expect(created.result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 120_000 + 3_600_000,
      pollIntervalMs: 5000,
    });
    expect(created.result).not.toHaveProperty('task');
    // Answered at once, as one JSON body: only a call that waits in the request streams.
    expect(contentTypes.at(-1)).toMatch(/^application\/json/);
    const taskId = created.result!.taskId as string;

    const client = await connectV2(second, { tasks: true });
    const working = await client.request({ method: 'tasks/get', params: { taskId } }, taskResultSchema);
    expect(working).toMatchObject({ taskId, status: 'working' });
    expect(working).not.toHaveProperty('result');
    // Cooperative cancellation: acknowledged, and the wait goes on to its deadline.
    const { _meta, ...ack } = await client.request({ method: 'tasks/cancel', params: { taskId } }, z.looseObject({}));
    expect({ _meta, ack }).toEqual({ _meta: expect.any(Object), ack: {} });

    await correspondence.reply(bobThreadId, 'Green, please.');
    const completed = await client.request({ method: 'tasks/get', params: { taskId } }, taskResultSchema);
    expect(completed).toMatchObject({ taskId, status: 'completed' });
    expect(structured(completed.result)).toMatchObject({ status: 'replied', message: { content_clean: 'Green, please.' } });
  });

  it('refuses forged ids as unknown (invalid params), and keeps tasks/result to 2025-11-25', async () => {
    const client = await connectV2(second, { tasks: true });
    await expect(
      client.request({ method: 'tasks/get', params: { taskId: 'w1.forged' } }, taskResultSchema),
    ).rejects.toMatchObject({
      code: UNKNOWN_TASK,
    });
    await expect(
      client.request({ method: 'tasks/cancel', params: { taskId: 'w1.forged' } }, z.looseObject({})),
    ).rejects.toMatchObject({
      code: UNKNOWN_TASK,
    });
    expect((await post2026(first, 'tasks/result', { taskId: 'w1.forged' })).error).toMatchObject({ code: -32601 });
  });

  it('acknowledges tasks/update of a live task (it never asks for input); unknown ids and undeclared requests are refused', async () => {
    const { threadId } = await correspondence.newThread('Update?');
    const created = await post2026(first, 'tools/call', { name: 'wait_for_reply', arguments: { thread_id: threadId } });
    const taskId = created.result!.taskId as string;
    const client = await connectV2(second, { tasks: true });
    const { _meta, ...ack } = await client.request({ method: 'tasks/update', params: { taskId } }, z.looseObject({}));
    expect({ _meta, ack }).toEqual({ _meta: expect.any(Object), ack: {} });
    await expect(
      client.request({ method: 'tasks/update', params: { taskId: 'w1.forged' } }, z.looseObject({})),
    ).rejects.toMatchObject({ code: UNKNOWN_TASK });
    const undeclared = await connectV2(first, { tasks: false });
    await expect(undeclared.request({ method: 'tasks/update', params: { taskId } }, z.looseObject({}))).rejects.toMatchObject({
      code: -32021,
    });
  });

  it('runs the tool as before for a client without the extension', async () => {
    const { threadId } = await correspondence.newThread('Plain 2026?');
    const client = await connectV2(first, { tasks: false });
    const result = await client.callTool({ name: 'wait_for_reply', arguments: { thread_id: threadId, timeout_seconds: 1 } });
    expect(structured(result)).toMatchObject({ status: 'timed_out', thread_id: threadId });
  });
});
