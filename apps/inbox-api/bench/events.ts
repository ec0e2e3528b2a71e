/**
 * Push latency: how soon a received message's event reaches (a) an SSE client of GET
 * /v1/events/stream, (b) a long-poll waiter of GET /v1/events?wait= and (c) a webhook receiver on
 * 127.0.0.1 (one webhook on `message.received`), while Mailgun route posts arrive at each of
 * `--rates` per second for `--seconds`; then what `--idle` idle SSE subscribers cost: the
 * server's resident memory, the V8 heap they hold (in use after a full collection while they are
 * open, less the same once they closed: a heap snapshot collects first; resident memory also counts
 * garbage not yet collected and what the heap reserved while they all opened at once), and the database's
 * transactions while they wait (none are theirs: one LISTEN per process).
 *
 *   pnpm --filter inbox-api bench:events [--seconds 10] [--rates 100,200,300] [--idle 1000]
 *
 * Latency is from the event's `created_at` to the moment the client reads it, on the same
 * machine's clock. `created_at` is taken when the event is appended, the last statement of its
 * transaction (events/log.ts): the figure is commit-to-client plus the commit itself. All rates run
 * against one server (its own process, production settings, a scratch database of
 * TEST_DATABASE_URL's server, dropped afterwards), one after the other, each with fresh clients.
 * Prints Markdown, with each rate's achieved ingest rate, load average and server CPU (cores, and ms
 * per message).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { heapSnapshotArgs, heapUsedAfterCollection, scrapeMetric } from '@repo/testing';
import { withBenchService } from './service.js';
import { startLatencyReceiver } from './receiver.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rates: { type: 'string', default: '100,200,300' },
    idle: { type: 'string', default: '1000' },
  },
});
const seconds = Number(values.seconds);
const rates = values.rates.split(',').map(Number);
const idle = Number(values.idle);

interface EventItem {
  id: number;
  created_at: string;
}

function mailgunForm(to: string): string {
  const messageId = `<${randomUUID()}@bench.example.com>`;
  return new URLSearchParams({
    recipient: to,
    sender: 'bob@example.com',
    from: 'Bob <bob@example.com>',
    subject: `Report ${messageId}`,
    'body-plain': 'Hi,\r\n\r\nthe report is ready.\r\n\r\nBob\r\n',
    'Message-Id': messageId,
  }).toString();
}

/** Posts mail to the inbox at `perSecond` for `forSeconds`; resolves with how many were accepted. */
async function ingest(url: string, to: string, perSecond: number, forSeconds: number): Promise<{ sent: number; failed: number }> {
  let sent = 0;
  let failed = 0;
  const pending = new Set<Promise<void>>();
  const started = performance.now();
  const total = perSecond * forSeconds;
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const request = fetch(`${url}/webhooks/mailgun`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: mailgunForm(to),
    })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.ok) sent++;
        else failed++;
      })
      .catch(() => void failed++)
      .finally(() => pending.delete(request));
    pending.add(request);
  }
  await Promise.all(pending);
  return { sent, failed };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

/** Reads an SSE stream, recording each event's latency; `stop` ends it. */
function sseClient(url: string, latencies: number[]) {
  const controller = new AbortController();
  const done = (async () => {
    const res = await fetch(url, { signal: controller.signal });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data) latencies.push(Date.now() - Date.parse((JSON.parse(data) as EventItem).created_at));
      }
    }
  })().catch(() => undefined);
  return { stop: () => controller.abort(), done };
}

/** Follows the log with long-polls, recording each first event's latency. */
function longPoller(url: string, from: number, latencies: number[]) {
  let running = true;
  const done = (async () => {
    let after = from;
    while (running) {
      const res = await fetch(`${url}&after=${after}&wait=5`);
      const page = (await res.json()) as { items: EventItem[]; next_after: number };
      const now = Date.now();
      for (const item of page.items) latencies.push(now - Date.parse(item.created_at));
      after = page.next_after;
    }
  })().catch(() => undefined);
  return {
    stop: () => {
      running = false;
    },
    done,
  };
}

const rss = (url: string) => scrapeMetric(url, 'process_resident_memory_bytes');
/** The server process's CPU seconds so far (event loop and workers): compared per message, less noisy than latency. */
const cpuSeconds = (url: string) => scrapeMetric(url, 'process_cpu_seconds_total');

async function transactions(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

async function postJson<T>(url: string, body: unknown): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const row = (rate: number, name: string, values: number[], load: string) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `| ${rate}/s | ${name} | ${sorted.length} | ${percentile(sorted, 50)} | ${percentile(sorted, 95)} | ${percentile(sorted, 99)} | ${sorted.at(-1)} | ${load} |`;
};
/** The id of the last event so far: each rate's clients start after it. */
async function latestEventId(url: string): Promise<number> {
  let after = 0;
  for (;;) {
    const page = (await (await fetch(`${url}/v1/events?limit=500&after=${after}`)).json()) as {
      items: unknown[];
      next_after: number;
    };
    after = page.next_after;
    if (page.items.length < 500) return after;
  }
}
const loadAverage = () => os.loadavg()[0]!.toFixed(1);

const receiver = await startLatencyReceiver();
// Where the server writes the heap snapshots (--heapsnapshot-signal) that heapUsedAfterCollection asks for.
const snapshots = await mkdtemp(path.join(os.tmpdir(), 'inbox-events-bench-heap-'));
const rows = await withBenchService(
  'events',
  { INBOX_WEBHOOK_ALLOW_PRIVATE: 'true' },
  async (service, databaseUrl) => {
    const inbox = await postJson<{ id: string; email_address: string }>(`${service.url}/v1/inboxes`, {
      name: 'Bench',
      email_username: 'bench',
    });
    await postJson(`${service.url}/v1/webhooks`, { url: receiver.url, event_types: ['message.received'] });
    // Warm up: a few messages, so that the first measured ones do not pay for compilation.
    await ingest(service.url, inbox.email_address, 50, 1);
    await sleep(1000);

    const table = [
      '| ingest rate | client | events | p50 ms | p95 ms | p99 ms | max ms | load (1 min) |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
    ];
    const notes: string[] = [];
    for (const rate of rates) {
      const last = await latestEventId(service.url);
      const sse: number[] = [];
      const poll: number[] = [];
      receiver.arrivals.length = 0;
      const stream = sseClient(`${service.url}/v1/events/stream?after=${last}&inbox_id=${inbox.id}`, sse);
      const poller = longPoller(`${service.url}/v1/events?inbox_id=${inbox.id}&types=message.received&limit=500`, last, poll);
      await sleep(500);
      const loadBefore = loadAverage();
      const cpuBefore = await cpuSeconds(service.url);
      const started = performance.now();
      const load = await ingest(service.url, inbox.email_address, rate, seconds);
      const ingestSeconds = (performance.now() - started) / 1000;
      // Let every client catch up (at most 30 s).
      const deadline = Date.now() + 30_000;
      while (Math.min(sse.length, poll.length, receiver.arrivals.length) < load.sent && Date.now() < deadline) await sleep(100);
      const loadAfter = loadAverage();
      const cpu = (await cpuSeconds(service.url)) - cpuBefore;
      const cpuCores = cpu / ((performance.now() - started) / 1000);
      stream.stop();
      poller.stop();
      await stream.done;
      const loadRange = `${loadBefore} to ${loadAfter}`;
      table.push(
        row(rate, 'SSE stream', sse, loadRange),
        row(rate, 'long-poll (wait=5)', poll, loadRange),
        row(
          rate,
          'webhook receiver',
          receiver.arrivals.map((arrival) => arrival.latency),
          loadRange,
        ),
      );
      notes.push(
        `${rate}/s: ${load.sent} posts accepted, ${load.failed} failed, in ${ingestSeconds.toFixed(1)} s ` +
          `(${(load.sent / ingestSeconds).toFixed(0)} msg/s achieved); server CPU ${cpuCores.toFixed(2)} cores, ${((cpu * 1000) / load.sent).toFixed(2)} ms per message ` +
          '(ingestion and all three pushes, until the clients caught up)',
      );
    }

    // Idle subscribers: the stream's filters match nothing that arrives meanwhile.
    const before = await rss(service.url);
    const controllers = Array.from({ length: idle }, () => new AbortController());
    const opened = await Promise.all(
      controllers.map((controller) =>
        fetch(`${service.url}/v1/events/stream?types=thread.summarized`, { signal: controller.signal }).then(
          (res) => res.status,
          () => 0,
        ),
      ),
    );
    // Each stream reads once when it opens: let those reads finish before counting.
    await sleep(10_000);
    const xactBefore = await transactions(databaseUrl);
    await sleep(10_000);
    const xactDuring = (await transactions(databaseUrl)) - xactBefore;
    const after = await rss(service.url);
    // After the resident memory: a snapshot's own buffers stay resident (glibc keeps freed memory, MALLOC_TRIM_THRESHOLD_).
    const heapWith = await heapUsedAfterCollection(service, snapshots);
    for (const controller of controllers) controller.abort();
    await sleep(3000);
    const heapWithout = await heapUsedAfterCollection(service, snapshots);

    return [
      `Latency from the event's created_at (its append, just before the commit) to the client; ${seconds} s per rate.`,
      '',
      ...table,
      '',
      ...notes.map((note) => `- ${note}`),
      '',
      `${opened.filter((status) => status === 200).length} of ${idle} idle SSE subscribers open: ` +
        `server RSS ${(before / 2 ** 20).toFixed(1)} MB before, ${(after / 2 ** 20).toFixed(1)} MB with them ` +
        `(+${((after - before) / 2 ** 20).toFixed(1)} MB); V8 heap in use after a full collection ${(heapWith / 2 ** 20).toFixed(1)} MB with them, ` +
        `${(heapWithout / 2 ** 20).toFixed(1)} MB 3 s after they closed (they held ${((heapWith - heapWithout) / 2 ** 20).toFixed(1)} MB, ` +
        `${((heapWith - heapWithout) / idle / 1024).toFixed(1)} KB each); database transactions in 10 s while they waited: ${xactDuring} ` +
        "(the one counting query, and the service's own periodic work)",
    ];
  },
  { nodeArgs: heapSnapshotArgs(snapshots) },
);
await receiver.close();
await rm(snapshots, { recursive: true, force: true });
console.log(rows.join('\n'));
