/**
 * 500 concurrent `wait_for_reply` tasks (issue 27's goal: under 50 MB extra in inbox-mcp, no REST
 * calls while idle). inbox-mcp runs as its own process from source, as `pnpm dev` runs it, against
 * a real inbox-api behind a loopback proxy that counts every REST call inbox-mcp makes. The bench
 * creates the tasks (2025-11-25 `tools/call` with a `task` param, SDK v1 client), measures
 * inbox-mcp's memory (its own /metrics: resident set and V8 heap) before and after, counts REST
 * calls over an idle window, then polls every task once (`tasks/get`), replies to every thread and
 * polls again, checking that each task completed with its reply.
 *
 *   pnpm --filter inbox-mcp bench:tasks [--tasks 500] [--threads 50] [--idle-seconds 10]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { heapSnapshotArgs, heapUsedAfterCollection, metricValue, startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { startInboxApi } from '../test/support/inbox-api.js';
import { startRecordingProxy } from '../test/support/recording-proxy.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '500' },
    threads: { type: 'string', default: '50' },
    'idle-seconds': { type: 'string', default: '10' },
  },
});
const taskCount = Number(values.tasks);
const threadCount = Number(values.threads);
const idleSeconds = Number(values['idle-seconds']);
const KEY = 'bench-key-0123456789';
const authorization = `Bearer ${KEY}`;
/** Requests in flight at once while creating or polling tasks, as many clients would send them. */
const CONCURRENCY = 50;

async function post(url: string, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; email_address: string; thread_id: string };
}

/** Runs `work` for every item, `CONCURRENCY` at a time. */
async function inParallel<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i]!);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}

const inboxApi = await startInboxApi('mcp_bench_tasks', { apiKeys: [KEY] });
const proxy = await startRecordingProxy(inboxApi.url);
// A heap snapshot, taken on SIGUSR2, starts with a full garbage collection: what the heap holds
// after it is what inbox-mcp keeps, not what a burst of requests left for the collector.
const snapshots = await mkdtemp(path.join(os.tmpdir(), 'inbox-mcp-bench-tasks-'));
const mcp = await startService('src/main.ts', {
  cwd: appRoot,
  env: { PORT: undefined, SERVICE_API_URL: proxy.url, LOG_LEVEL: 'info', INBOX_MCP_TASK_KEY: 'bench task key' },
  args: ['--transport', 'http', '--port', '0'],
  // The young generation as infra/docker/inbox-mcp.Dockerfile sizes it.
  nodeArgs: ['--max-semi-space-size=16', ...heapSnapshotArgs(snapshots)],
  keepLogs: false,
});

/** inbox-mcp's own view of its memory (its /metrics), in MB. */
async function memory(): Promise<{ rss: number; heap: number }> {
  const text = await (await fetch(`${mcp.url}/metrics`)).text();
  const metric = (name: string) => metricValue(text, name) / 2 ** 20;
  return { rss: metric('process_resident_memory_bytes'), heap: metric('nodejs_heap_size_used_bytes') };
}

/** The V8 heap in use after a full collection (a heap snapshot's), in MB: what inbox-mcp keeps. */
const heapAfterFullGc = async () => (await heapUsedAfterCollection(mcp, snapshots)) / 2 ** 20;

try {
  const agent = await post(`${inboxApi.url}/v1/inboxes`, { name: 'Agent', email_username: 'agent' });
  const peer = await post(`${inboxApi.url}/v1/inboxes`, { name: 'Peer', email_username: 'peer' });
  const threads: { threadId: string; peerThreadId: string }[] = [];
  for (let i = 0; i < threadCount; i++) {
    const sent = await post(`${inboxApi.url}/v1/messages`, {
      inbox_id: agent.id,
      to: [peer.email_address],
      subject: `Question ${i}`,
      body: 'Well?',
    });
    threads.push({ threadId: sent.thread_id, peerThreadId: '' });
  }
  const peerMessages = await (
    await fetch(`${inboxApi.url}/v1/messages?inbox_id=${peer.id}&limit=${threadCount}`, { headers: { authorization } })
  ).json();
  for (const message of (peerMessages as { items: { thread_id: string; subject: string }[] }).items) {
    threads[Number(message.subject.split(' ')[1])]!.peerThreadId = message.thread_id;
  }

  const client = new Client({ name: 'bench-tasks', version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`), { requestInit: { headers: { authorization } } }),
  );
  await client.listTools();
  // Warm up the paths measured, then load the process as creating the tasks will (a burst of the
  // same size and concurrency, each request a fresh server), so that "before" holds the code and
  // the heap such a burst needs, and "after" shows what the open tasks add.
  const warmUp = await client.request(
    { method: 'tools/call', params: { name: 'wait_for_reply', arguments: { thread_id: threads[0]!.threadId }, task: {} } },
    CreateTaskResultSchema,
  );
  const startup = await memory();
  await inParallel(Array.from({ length: taskCount }), () =>
    client.request({ method: 'tasks/get', params: { taskId: warmUp.task.taskId } }, GetTaskResultSchema),
  );
  const before = await memory();

  const callsBeforeCreate = proxy.forwarded.length;
  const started = performance.now();
  const taskIds = await inParallel(
    Array.from({ length: taskCount }, (_, i) => threads[i % threadCount]!.threadId),
    async (threadId) =>
      (
        await client.request(
          {
            method: 'tools/call',
            params: { name: 'wait_for_reply', arguments: { thread_id: threadId, timeout_seconds: 900 }, task: {} },
          },
          CreateTaskResultSchema,
        )
      ).task.taskId,
  );
  const createSeconds = (performance.now() - started) / 1000;
  const createCalls = proxy.forwarded.length - callsBeforeCreate;

  const idleFrom = proxy.forwarded.length;
  await delay(idleSeconds * 1000);
  const idleCalls = proxy.forwarded.length - idleFrom;
  const after = await memory();
  const afterGc = await heapAfterFullGc();

  const poll = async () => {
    const from = proxy.forwarded.length;
    const statuses = await inParallel(
      taskIds,
      async (taskId) => (await client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status,
    );
    return { calls: proxy.forwarded.length - from, statuses };
  };
  const working = await poll();
  for (const thread of threads) {
    await post(`${inboxApi.url}/v1/messages`, {
      inbox_id: peer.id,
      to: [agent.email_address],
      subject: 'Re',
      body: 'Here.',
      reply_to_thread_id: thread.peerThreadId,
    });
  }
  const completed = await poll();
  await client.close();

  const count = (statuses: string[], status: string) => statuses.filter((s) => s === status).length;
  const mb = (value: number) => value.toFixed(1);
  console.log(
    `${taskCount} wait_for_reply tasks on ${threadCount} threads, created ${CONCURRENCY} at a time in ${createSeconds.toFixed(1)} s`,
  );
  console.log('');
  console.log('| measure | value |');
  console.log('|---|---|');
  console.log(
    `| inbox-mcp RSS after start-up / after a warm-up burst / with the tasks open (MB) | ${mb(startup.rss)} / ${mb(before.rss)} / ${mb(after.rss)}: **${mb(after.rss - before.rss)} extra** |`,
  );
  console.log(`| V8 heap used, the same (MB) | ${mb(startup.heap)} / ${mb(before.heap)} / ${mb(after.heap)} |`);
  console.log(
    `| V8 heap used after a full GC with the tasks open (MB) | ${mb(afterGc)} (${mb(afterGc - startup.heap)} above start-up's, before any GC) |`,
  );
  console.log(`| REST calls to create the tasks | ${createCalls} (${(createCalls / taskCount).toFixed(2)} per task) |`);
  console.log(`| REST calls while idle (${idleSeconds} s, ${taskCount} tasks open) | **${idleCalls}** |`);
  console.log(
    `| tasks/get of every task: REST calls, statuses | ${working.calls}, ${count(working.statuses, 'working')} working |`,
  );
  console.log(
    `| after a reply in every thread: REST calls, statuses | ${completed.calls}, ${count(completed.statuses, 'completed')} completed |`,
  );
} finally {
  await mcp.stop();
  await proxy.close();
  await inboxApi.stop();
  await rm(snapshots, { recursive: true, force: true });
}
