/**
 * Events: how soon a received message reaches (a) an SSE client of GET /v1/events/stream and (b) a
 * long-poll waiter of GET /v1/events?wait=, while Mailgun route posts arrive at `--rate` per second;
 * then what `--idle` idle SSE subscribers cost: the server's resident memory, and the database's
 * transactions while they wait (none are theirs: one LISTEN per process).
 *
 *   pnpm --filter inbox-api bench:events [--seconds 10] [--rate 300] [--idle 1000]
 *
 * Latency is from the message's `created_at` (taken before its transaction commits, so the figure
 * is an upper bound on commit-to-client) to the moment the client reads the event, on the same
 * machine's clock. The server runs as its own process with production settings on a scratch
 * database of TEST_DATABASE_URL's server, dropped afterwards. Prints a Markdown table.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { withBenchService } from './service.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '300' },
    idle: { type: 'string', default: '1000' },
  },
});
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const idle = Number(values.idle);

interface EventItem {
  id: number;
  data: { created_at: string };
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
        if (data) latencies.push(Date.now() - Date.parse((JSON.parse(data) as EventItem).data.created_at));
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
      for (const item of page.items) latencies.push(now - Date.parse(item.data.created_at));
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

async function rss(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^process_resident_memory_bytes(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1]);
}

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

const rows = await withBenchService('events', {}, async (service, databaseUrl) => {
  const inbox = (await (
    await fetch(`${service.url}/v1/inboxes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', email_username: 'bench' }),
    })
  ).json()) as { id: string; email_address: string };
  // Warm up: a few messages, so that the first measured ones do not pay for compilation.
  await ingest(service.url, inbox.email_address, 50, 1);
  const head = ((await (await fetch(`${service.url}/v1/events?limit=500`)).json()) as { next_after: number }).next_after;

  const sse: number[] = [];
  const poll: number[] = [];
  const stream = sseClient(`${service.url}/v1/events/stream?after=${head}&inbox_id=${inbox.id}`, sse);
  const poller = longPoller(`${service.url}/v1/events?inbox_id=${inbox.id}&types=message.received&limit=500`, head, poll);
  await sleep(500);
  const load = await ingest(service.url, inbox.email_address, rate, seconds);
  await sleep(1000);
  stream.stop();
  poller.stop();
  await stream.done;

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
  for (const controller of controllers) controller.abort();

  const row = (name: string, values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `| ${name} | ${sorted.length} | ${percentile(sorted, 50)} | ${percentile(sorted, 95)} | ${percentile(sorted, 99)} | ${sorted.at(-1)} |`;
  };
  return [
    `Ingestion: ${load.sent} accepted, ${load.failed} failed, at a target of ${rate}/s for ${seconds} s`,
    '',
    '| Client | Events | p50 ms | p95 ms | p99 ms | max ms |',
    '| --- | --- | --- | --- | --- | --- |',
    row('SSE stream', sse),
    row('Long-poll (wait=5)', poll),
    '',
    `${opened.filter((status) => status === 200).length} of ${idle} idle SSE subscribers open: ` +
      `server RSS ${(before / 2 ** 20).toFixed(1)} MB before, ${(after / 2 ** 20).toFixed(1)} MB with them ` +
      `(+${((after - before) / 2 ** 20).toFixed(1)} MB); database transactions in 10 s while they waited: ${xactDuring} ` +
      "(the one counting query, and the service's own periodic work)",
  ];
});
console.log(rows.join('\n'));
