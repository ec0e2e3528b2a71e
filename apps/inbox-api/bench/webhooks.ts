/**
 * Webhooks out: (1) fan-out, how many deliveries per second reach a receiver on 127.0.0.1 when
 * each received message goes to `--webhooks` webhooks (all to that receiver), with the latency
 * from the event's `created_at` (its append, the last statement before the commit) to the
 * receiver (after two seconds at the rate, not measured: JIT compilation, connections); (2) what
 * one webhook subscribed to every event costs ingestion: Mailgun route posts from `--concurrency`
 * clients for `--seconds`, without a webhook and with one, in `--rounds` rounds (default 2) of
 * alternating order (without, with; with, without; ...: neither runs always first, or always on a
 * machine the other has just loaded), and the CPU each message took: the server's, Postgres's (its
 * backends of the scratch database, read from /proc: Postgres on this machine) and this process's
 * (the posting clients and the receiver); then the median rate of each and its change. The fan-out
 * reports the server's and Postgres's CPU per delivery likewise.
 *
 *   pnpm --filter inbox-api bench:webhooks [--seconds 10] [--rate 100] [--webhooks 10] [--concurrency 16]
 *     [--rounds 2] [--only fanout|ingestion|no-webhook] [--cpu-prof DIR]
 *
 * `--only no-webhook` runs the ingestion without a webhook alone, which also runs against a version of
 * the service from before webhooks (copy bench/ into its checkout), to compare in one session.
 *
 * The server runs as its own process with production settings on a scratch database (bench/service.ts).
 * Prints Markdown.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { scrapeMetric } from '@repo/testing';
import { postgresCpuMs, withBenchService } from './service.js';
import { startLatencyReceiver } from './receiver.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '100' },
    webhooks: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
    // A folder for the server's CPU profiles of the ingestion runs (node --cpu-prof), without and with the webhook.
    'cpu-prof': { type: 'string' },
    only: { type: 'string' },
  },
});
const only = values.only;
if (only !== undefined && !['fanout', 'ingestion', 'no-webhook'].includes(only)) {
  throw new Error(`--only expects fanout, ingestion or no-webhook, not ${only}`);
}
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const webhookCount = Number(values.webhooks);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds expects a whole number from 1, not ${values.rounds}`);

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

const post = (url: string, to: string) =>
  fetch(`${url}/webhooks/mailgun`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: mailgunForm(to),
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.ok;
  });

async function json<T>(url: string, method = 'GET', body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** An SSE client of the same events, for comparison in the same run: latencies from the event's created_at. */
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
        if (data) latencies.push(Date.now() - Date.parse((JSON.parse(data) as { created_at: string }).created_at));
      }
    }
  })().catch(() => undefined);
  return { stop: () => controller.abort(), done };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

/** The middle value (of an even count, the mean of the two middle ones). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!;
}

async function inbox(url: string) {
  return json<{ id: string; email_address: string }>(`${url}/v1/inboxes`, 'POST', { name: 'Bench', email_username: 'bench' });
}

/** Closed loop: `concurrency` clients posting for `forSeconds`; messages accepted per second. */
async function ingestFlat(
  url: string,
  to: string,
  forSeconds: number,
): Promise<{ perSecond: number; sent: number; failed: number }> {
  let sent = 0;
  let failed = 0;
  const end = performance.now() + forSeconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        if (await post(url, to).catch(() => false)) sent++;
        else failed++;
      }
    }),
  );
  return { perSecond: sent / ((performance.now() - started) / 1000), sent, failed };
}

/** CPU ms so far of the server, of the database's backends (but `db`'s own) and of this process. */
async function cpuMs(url: string, db: pg.Client): Promise<{ server: number; postgres: number; bench: number }> {
  const postgres = await postgresCpuMs(db);
  const own = process.cpuUsage();
  return {
    server: (await scrapeMetric(url, 'process_cpu_seconds_total')) * 1000,
    postgres,
    bench: (own.user + own.system) / 1000,
  };
}

const env = { INBOX_WEBHOOK_ALLOW_PRIVATE: 'true' };
const profileArgs = (name: string) =>
  values['cpu-prof']
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`, `--cpu-prof-name=${name}.cpuprofile`]
    : [];

// (1) Fan-out.
const receiver = await startLatencyReceiver();
const fanout =
  only !== undefined && only !== 'fanout'
    ? []
    : await withBenchService('webhooks', env, async (service, databaseUrl) => {
        const { email_address: to } = await inbox(service.url);
        await Promise.all(Array.from({ length: 20 }, () => post(service.url, to)));
        for (let i = 0; i < webhookCount; i++) {
          await json(`${service.url}/v1/webhooks`, 'POST', { url: receiver.url, event_types: ['message.received'] });
        }
        const expected = rate * seconds * webhookCount;
        const head = (await json<{ next_after: number }>(`${service.url}/v1/events?limit=500`)).next_after;
        const sse: number[] = [];
        const stream = sseClient(`${service.url}/v1/events/stream?after=${head}&types=message.received`, sse);
        await sleep(500);
        const db = new pg.Client({ connectionString: databaseUrl });
        await db.connect();
        /** Posts `count` messages at `rate` a second; answers how many were accepted, once every delivery of them arrived. */
        const offer = async (count: number) => {
          const from = Date.now();
          let accepted = 0;
          const pending: Promise<void>[] = [];
          for (let i = 0; i < count; i++) {
            const wait = from + (i * 1000) / rate - Date.now();
            if (wait > 0) await sleep(wait);
            pending.push(post(service.url, to).then((ok) => void (ok && accepted++)));
          }
          await Promise.all(pending);
          const deadline = Date.now() + 120_000;
          while (receiver.arrivals.length < accepted * webhookCount && Date.now() < deadline) await sleep(100);
          return accepted;
        };
        // Two seconds at the rate first, not measured: the first deliveries wait for JIT compilation and new
        // connections (a p95 of 400 ms when they were counted, 40 ms from the third second on).
        await offer(rate * 2);
        receiver.arrivals.length = 0;
        sse.length = 0;
        const cpuBefore = await cpuMs(service.url, db);
        const started = Date.now();
        const accepted = await offer(rate * seconds);
        const cpuAfter = await cpuMs(service.url, db);
        await db.end();
        // Per delivery, with the ingestion of its message (a tenth of it at 10 webhooks) included.
        const perDelivery = (key: 'server' | 'postgres') =>
          ((cpuAfter[key] - cpuBefore[key]) / receiver.arrivals.length).toFixed(3);
        stream.stop();
        await stream.done;
        const sseSorted = [...sse].sort((a, b) => a - b);
        const arrivals = receiver.arrivals;
        const last = Math.max(...arrivals.map((arrival) => arrival.at));
        const sorted = arrivals.map((arrival) => arrival.latency).sort((a, b) => a - b);
        return [
          `Fan-out: ${accepted} messages received at ${rate}/s for ${seconds} s, each to ${webhookCount} webhooks: ` +
            `${arrivals.length} of ${expected} deliveries in ${((last - started) / 1000).toFixed(1)} s, ` +
            `**${(arrivals.length / ((last - started) / 1000)).toFixed(0)} deliveries/s**; ` +
            `event created_at to receiver p50 ${percentile(sorted, 50)} ms, p95 ${percentile(sorted, 95)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms; ` +
            `an SSE client of the same events in the same run: p50 ${percentile(sseSorted, 50)} ms, p95 ${percentile(sseSorted, 95)} ms; ` +
            `CPU ms per delivery (its message's ingestion included): server ${perDelivery('server')}, Postgres ${perDelivery('postgres')}`,
        ];
      });

// (2) Ingestion without and with one webhook on every event, in rounds of alternating order.
const ingestion: string[] = [
  '| Ingestion (Mailgun route posts) | messages/s | failed | deliveries | CPU ms per message: server / Postgres / bench (clients, receiver) |',
  '| --- | --- | --- | --- | --- |',
];
const order =
  only === 'fanout'
    ? []
    : only === 'no-webhook'
      ? [false]
      : Array.from({ length: rounds }, (_, round) => (round % 2 === 0 ? [false, true] : [true, false])).flat();
const rates = { without: [] as number[], with: [] as number[] };
for (const subscribed of order) {
  receiver.arrivals.length = 0;
  const row = await withBenchService(
    'webhooks',
    env,
    async (service, databaseUrl) => {
      const { email_address: to } = await inbox(service.url);
      await Promise.all(Array.from({ length: 20 }, () => post(service.url, to)));
      if (subscribed) {
        await json(`${service.url}/v1/webhooks`, 'POST', {
          url: receiver.url,
          event_types: ['message.received', 'message.sent', 'message.delivered', 'message.failed', 'thread.summarized'],
        });
      }
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        const before = await cpuMs(service.url, db);
        const result = await ingestFlat(service.url, to, seconds);
        const after = await cpuMs(service.url, db);
        const perMessage = (key: keyof typeof after) => ((after[key] - before[key]) / result.sent).toFixed(2);
        await sleep(3000);
        rates[subscribed ? 'with' : 'without'].push(result.perSecond);
        return (
          `| ${subscribed ? 'one webhook, every event' : 'no webhook'} | ${result.perSecond.toFixed(0)} | ${result.failed} | ${receiver.arrivals.length} ` +
          `| ${perMessage('server')} / ${perMessage('postgres')} / ${perMessage('bench')} |`
        );
      } finally {
        await db.end();
      }
    },
    { nodeArgs: profileArgs(subscribed ? 'webhook' : 'none') },
  );
  ingestion.push(row);
}
if (rates.with.length > 0 && rates.without.length > 0) {
  const without = median(rates.without);
  const withWebhook = median(rates.with);
  ingestion.push(
    '',
    `Median of ${rates.without.length} runs each: ${without.toFixed(0)} messages/s without a webhook, ${withWebhook.toFixed(0)} with one ` +
      `(${(((withWebhook - without) / without) * 100).toFixed(1)} %; goal: within 10 %).`,
  );
}
await receiver.close();
console.log([...fanout, '', ...(only === 'fanout' ? [] : ingestion)].join('\n'));
