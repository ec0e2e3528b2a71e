/**
 * Sustained inbound-mail ingestion: Mailgun route posts (multipart/form-data, as Mailgun's
 * forward() sends them) to `POST /webhooks/mailgun` with autocannon, without an attachment and
 * with a 50 KB one, each message with a Message-ID of its own; and SendGrid "send raw" posts of
 * an 8 KB MIME mail, which the content workers parse. Then, in the same run, the same rows
 * (thread, message, search row) written straight into Postgres with plain INSERTs, so that the
 * service's overhead is a ratio; for the first scenario, the CPU time per message of the server and
 * of its database's Postgres backends (from /proc). Then ingestion with 1 MB HTML newsletters mixed in (one request
 * in 20), while the server's event-loop delay is read from its /metrics. Last, one mail of each
 * hostile raw-MIME shape (bench/mime-shapes.ts) through SendGrid's raw mode, and short lines in SendGrid's and
 * Mailgun's parsed fields, one at a time, 1 MB each or --shape-mb (a round to warm up, then the round measured): how long it takes, the server's CPU time for it (event loop and workers), the event loop's
 * delay meanwhile (its maximum and 99th percentile, from /metrics; the maximum less prom-client's 10 ms sampling interval,
 * which its histogram counts in every sample, is the longest stall), and the slowest answer to `GET /health` sent
 * one after another meanwhile (what the mail made another request wait).
 *
 *   pnpm --filter inbox-api bench:ingest [--seconds 15] [--connections 8] [--shapes-only] [--shape-mb 1] [--cpu-prof DIR]
 *
 * The server runs as its own process with production settings on a scratch database of
 * TEST_DATABASE_URL's server (default postgresql://postgres@127.0.0.1:5432), dropped afterwards.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { createScratchDatabase } from '@repo/db/dev';
import { metricValue, startService } from '@repo/testing';
import { appRoot, migrationsDir } from '../src/paths.js';
import { MIME_SHAPES, repeatTo } from './mime-shapes.js';
import { postgresCpuMs, probeHealth } from './service.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '8' },
    'shapes-only': { type: 'boolean', default: false },
    // The size of each raw-MIME shape, in MB: 1 by default; the webhooks take mail up to about 20 MB.
    'shape-mb': { type: 'string', default: '1' },
    // A folder for the server's CPU profile (node --cpu-prof), to see where its time goes.
    'cpu-prof': { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const shapeBytes = Number(values['shape-mb']) * 1_000_000;

const BOUNDARY = 'bench-boundary-7d3f';
const attachment = randomBytes(50 * 1024);
const newsletter = `<html><body>${'<table role="presentation"><tr><td><h2>Story</h2><p>Some <b>news</b> and <a href="https://example.com/x">a link</a>.</p></td></tr></table>'.repeat(9000)}</body></html>`;

/**
 * One Mailgun route post: the parsed fields, optionally a file, a fresh Message-ID. One subject for
 * all makes every mail join one thread (each then waits for the one before to commit, on the
 * thread's row); `subject` gives each its own, as the raw inserts below start a thread for each.
 */
function mailgunPost(to: string, options: { attachment?: boolean; html?: string; subject?: string } = {}): Buffer {
  const messageId = `<${randomUUID()}@bench.example.com>`;
  const subject = options.subject ?? 'Weekly report';
  const fields: Record<string, string> = {
    recipient: to,
    sender: 'bob@example.com',
    from: 'Bob <bob@example.com>',
    subject,
    'body-plain': 'Hi,\r\n\r\nthe weekly report is ready.\r\n\r\nBob\r\n',
    'body-html': options.html ?? '<p>Hi,</p><p>the weekly report is ready.</p><p>Bob</p>',
    'Message-Id': messageId,
    'message-headers': JSON.stringify([
      ['From', 'Bob <bob@example.com>'],
      ['To', to],
      ['Subject', subject],
      ['Message-Id', messageId],
      ['X-Mailgun-Spf', 'Pass'],
    ]),
  };
  const parts = Object.entries(fields).map(([name, value]) =>
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
  );
  if (options.attachment) {
    parts.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="attachment-1"; filename="report.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
      ),
      attachment,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

/** A SendGrid Inbound Parse post in "send raw" mode: the whole mail in `email`. */
function sendgridRawPost(to: string, raw: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="envelope"\r\n\r\n${JSON.stringify({ to: [to] })}\r\n`),
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="email"\r\n\r\n`),
    raw,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** An ordinary mail of about 8 KB: above the 4 KB the service parses inline, so a content worker parses it. */
function ordinaryMime(to: string): Buffer {
  const paragraph = 'The weekly report is ready; the numbers are in the attached sheet and the summary below. ';
  return Buffer.from(
    [
      'From: Bob <bob@example.com>',
      `To: ${to}`,
      'Subject: Weekly report',
      `Message-ID: <${randomUUID()}@bench.example.com>`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      '',
      paragraph.repeat(40),
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      '',
      `<p>${paragraph.repeat(40)}</p>`,
      '--alt--',
      '',
    ].join('\r\n'),
  );
}

interface Run {
  scenario: string;
  perSecond: number;
  p50: number;
  p99: number;
  statuses: string;
  /** Responses with status 2xx. */
  stored: number;
  loopP99?: number;
}

async function ingest(url: string, scenario: string, body: (i: number) => Buffer, path = '/webhooks/mailgun'): Promise<Run> {
  let i = 0;
  const result = await autocannon({
    url: `${url}${path}`,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    requests: [{ setupRequest: (request) => ({ ...request, body: body(i++) }) }],
  });
  const statuses = `2xx ${result['2xx']}, non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`;
  return {
    scenario,
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    stored: result['2xx'],
  };
}

/**
 * The server's event-loop delay since the last scrape (prom-client resets it on each collection),
 * its p99 and maximum in ms, and the process's CPU time so far (event loop and workers), in ms.
 */
async function serverFigures(url: string): Promise<{ loopP99: number; loopMax: number; cpuMs: number }> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const metric = (name: string) => metricValue(metrics, name) * 1000;
  return {
    loopP99: metric('nodejs_eventloop_lag_p99_seconds'),
    loopMax: metric('nodejs_eventloop_lag_max_seconds'),
    cpuMs: metric('process_cpu_seconds_total'),
  };
}

interface ShapeRun {
  shape: string;
  megabytes: number;
  status: string;
  ms: number;
  cpuMs: number;
  loopP99: number;
  loopMax: number;
  slowestOtherMs: number;
}

/**
 * prom-client's event-loop histogram (monitorEventLoopDelay at its default resolution) records the
 * time between its timer's runs, so every sample holds this interval besides the delay: a loop
 * blocked 30 ms shows a maximum near 40.
 */
const LOOP_SAMPLING_MS = 10;

/** A webhook request of one shape: what the table shows, and what is posted. */
interface ShapeRequest {
  shape: string;
  path: string;
  contentType: string;
  body: Buffer;
  /** The mail's size, in bytes. */
  bytes: number;
}

/**
 * The shapes, each once: every raw-MIME shape (bench/mime-shapes.ts) through SendGrid's raw mode,
 * then short lines in the parsed-field modes, SendGrid's multipart `text` and Mailgun's
 * URL-encoded `body-plain` (each field's bytes taken whole, not parsed as MIME).
 */
function shapeRequests(to: string): ShapeRequest[] {
  const raw = Object.entries(MIME_SHAPES).map(([shape, { make, fixedBytes }]): ShapeRequest => {
    const mail = make({ to, messageId: `<${randomUUID()}@bench.example.com>`, bytes: fixedBytes ?? shapeBytes });
    return {
      shape,
      path: '/webhooks/sendgrid',
      contentType: `multipart/form-data; boundary=${BOUNDARY}`,
      body: sendgridRawPost(to, mail),
      bytes: mail.length,
    };
  });
  const lines = repeatTo(shapeBytes, 'a\r\n');
  const messageId = () => `<${randomUUID()}@bench.example.com>`;
  const sendgridParsed = multipartFields({
    headers: `From: Bob <bob@example.com>\r\nTo: ${to}\r\nSubject: Parsed short lines\r\nMessage-ID: ${messageId()}\r\n`,
    from: 'Bob <bob@example.com>',
    to,
    subject: 'Parsed short lines',
    text: lines,
    envelope: JSON.stringify({ to: [to], from: 'bob@example.com' }),
  });
  const mailgunMessageId = messageId();
  const mailgunEncoded = Buffer.from(
    new URLSearchParams({
      recipient: to,
      from: 'Bob <bob@example.com>',
      subject: 'URL-encoded short lines',
      'Message-Id': mailgunMessageId,
      'message-headers': JSON.stringify([
        ['From', 'Bob <bob@example.com>'],
        ['To', to],
        ['Message-Id', mailgunMessageId],
      ]),
      // URL-encoded, short lines take 7 bytes for 3: 15 MB is about the most the webhooks' 38 MB take.
      'body-plain': lines.slice(0, 15_000_000),
    }).toString(),
  );
  return [
    ...raw,
    {
      shape: 'SendGrid parsed `text`, short lines',
      path: '/webhooks/sendgrid',
      contentType: `multipart/form-data; boundary=${BOUNDARY}`,
      body: sendgridParsed,
      bytes: lines.length,
    },
    {
      shape: 'Mailgun URL-encoded `body-plain`, short lines',
      path: '/webhooks/mailgun',
      contentType: 'application/x-www-form-urlencoded',
      body: mailgunEncoded,
      bytes: Math.min(lines.length, 15_000_000),
    },
  ];
}

/** Fields as multipart/form-data. */
function multipartFields(fields: Record<string, string>): Buffer {
  return Buffer.concat([
    ...Object.entries(fields).map(([name, value]) =>
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    ),
    Buffer.from(`--${BOUNDARY}--\r\n`),
  ]);
}

/**
 * One mail of each shape (shapeRequests), one at a time, the server otherwise idle; first the
 * server left idle for 3 s, the floor of what the machine's own load does to it.
 */
async function ingestShapes(url: string, to: string): Promise<ShapeRun[]> {
  const runs: ShapeRun[] = [];
  const idleFrom = await serverFigures(url);
  const idleProbe = await probeHealth(url, { intervalMs: 10 });
  await sleep(3000);
  const idleSlowest = await idleProbe();
  const idle = await serverFigures(url);
  runs.push({
    shape: 'idle: only the GET /health probe for 3 s',
    megabytes: 0,
    status: '',
    ms: 3000,
    cpuMs: idle.cpuMs - idleFrom.cpuMs,
    loopP99: idle.loopP99,
    loopMax: idle.loopMax,
    slowestOtherMs: idleSlowest,
  });
  for (const { shape, path, contentType, body, bytes } of shapeRequests(to)) {
    const before = await serverFigures(url);
    const probe = await probeHealth(url, { intervalMs: 10 });
    const started = performance.now();
    const status = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body }).then(
      async (response) => {
        await response.arrayBuffer();
        return String(response.status);
      },
      (error: Error) => `${error.message} (${(error.cause as Error | undefined)?.message ?? ''})`,
    );
    const ms = performance.now() - started;
    const slowestOtherMs = await probe();
    const after = await serverFigures(url);
    runs.push({
      shape,
      megabytes: bytes / 1e6,
      status,
      ms,
      cpuMs: after.cpuMs - before.cpuMs,
      loopP99: after.loopP99,
      loopMax: after.loopMax,
      slowestOtherMs,
    });
  }
  return runs;
}

/** The same rows the service writes for one received message, inserted with plain SQL: messages per second. */
async function rawInserts(databaseUrl: string, inboxId: string): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      return client;
    }),
  );
  let count = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < deadline) {
        const messageId = `<${randomUUID()}@raw.example.com>`;
        await client.query('BEGIN');
        const thread = await client.query<{ id: string }>(
          `INSERT INTO threads (id, inbox_id, subject, subject_key, last_message_at, message_count, participants)
           VALUES (gen_random_uuid(), $1, 'Weekly report', encode(sha256('weekly report'), 'hex'), now(), 1, ARRAY['bob@example.com']) RETURNING id`,
          [inboxId],
        );
        const message = await client.query<{ id: string }>(
          `INSERT INTO messages (id, thread_id, inbox_id, direction, status, provider_message_id, subject, from_address,
             to_addresses, cc_addresses, bcc_addresses, reply_to_addresses, text, html, content_clean, preview, size,
             timestamp, labels, metadata, created_at)
           VALUES (gen_random_uuid(), $1, $2, 'inbound', 'received', $3, 'Weekly report', 'bob@example.com', ARRAY['x@bench.test'],
             '{}', '{}', '{}', 'Hi, the weekly report is ready. Bob', '<p>Hi,</p>', 'Hi,\n\nthe weekly report is ready.', 'Hi, the weekly report is ready.',
             120, now(), '{}', '{}', now()) RETURNING id`,
          [thread.rows[0]!.id, inboxId, messageId],
        );
        await client.query(
          `INSERT INTO message_search (message_id, inbox_id, thread_id, created_at, search_text)
           VALUES ($1, $2, $3, now(), $4)`,
          [
            message.rows[0]!.id,
            inboxId,
            thread.rows[0]!.id,
            'weekly report\nbob@example.com\nhi, the weekly report is ready. bob',
          ],
        );
        await client.query('COMMIT');
        count++;
      }
    }),
  );
  const perSecond = count / ((performance.now() - started) / 1000);
  await Promise.all(clients.map((client) => client.end()));
  return perSecond;
}

const database = await createScratchDatabase({ label: 'inbox_ingest_bench', migrationsDir });
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-ingest-bench-'));
const runs: Run[] = [];
let raw: number | undefined;
let shapeRuns: ShapeRun[] | undefined;
/** CPU ms per message of the first scenario (a thread each): the server's, its database backends', and the load average meanwhile. */
let perMessage: { server: number; postgres: number; load: string } | undefined;
try {
  const service = await startService('src/server.ts', {
    cwd: appRoot,
    env: {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      INBOX_EMAIL_DOMAIN: 'bench.test',
      INBOX_RATE_LIMIT_PER_MINUTE: '0',
      INBOX_API_KEYS: undefined,
      // As infra/docker/inbox-api.Dockerfile runs it.
      MALLOC_MMAP_THRESHOLD_: '33554432',
      MALLOC_TRIM_THRESHOLD_: '134217728',
    },
    timeoutMs: 60_000,
    keepLogs: false,
    nodeArgs: values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`] : [],
  });
  try {
    const inbox = (await (
      await fetch(`${service.url}/v1/inboxes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bench', email_username: 'bench' }),
      })
    ).json()) as { id: string; email_address: string };

    await ingest(service.url, 'warm-up', () => mailgunPost(inbox.email_address));
    if (!values['shapes-only']) {
      const db = new pg.Client({ connectionString: database.url });
      await db.connect();
      try {
        const before = {
          server: (await serverFigures(service.url)).cpuMs,
          postgres: await postgresCpuMs(db),
          load: os.loadavg()[0]!,
        };
        const run = await ingest(service.url, 'Mailgun multipart, no attachment, a thread each', (i) =>
          mailgunPost(inbox.email_address, { subject: `Weekly report ${i}` }),
        );
        const after = {
          server: (await serverFigures(service.url)).cpuMs,
          postgres: await postgresCpuMs(db),
          load: os.loadavg()[0]!,
        };
        runs.push(run);
        perMessage = {
          server: (after.server - before.server) / run.stored,
          postgres: (after.postgres - before.postgres) / run.stored,
          load: `${before.load.toFixed(1)} to ${after.load.toFixed(1)}`,
        };
      } finally {
        await db.end();
      }
      runs.push(
        await ingest(service.url, 'Mailgun multipart, no attachment, all in one thread', () => mailgunPost(inbox.email_address)),
      );
      runs.push(
        await ingest(service.url, 'Mailgun multipart, 50 KB attachment', () =>
          mailgunPost(inbox.email_address, { attachment: true }),
        ),
      );
      runs.push(
        await ingest(
          service.url,
          'SendGrid raw MIME, 8 KB (parsed in a worker)',
          () => sendgridRawPost(inbox.email_address, ordinaryMime(inbox.email_address)),
          '/webhooks/sendgrid',
        ),
      );
      await serverFigures(service.url);
      const mixed = await ingest(service.url, 'no attachment, 1 in 20 a 1 MB HTML newsletter', (i) =>
        mailgunPost(inbox.email_address, i % 20 === 0 ? { html: newsletter } : {}),
      );
      runs.push({ ...mixed, loopP99: (await serverFigures(service.url)).loopP99 });
      raw = await rawInserts(database.url, inbox.id);
    }
    // The first round warms the server up (compiled code, the workers); the second is measured.
    await ingestShapes(service.url, inbox.email_address);
    shapeRuns = await ingestShapes(service.url, inbox.email_address);
  } finally {
    await service.stop();
  }
} finally {
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}

const cpu = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`;
const format = (value: number) => value.toFixed(value < 10 ? 1 : 0);
const lines: string[] = [];
if (raw !== undefined) {
  lines.push(
    `${seconds} s per run, ${connections} connections; ${cpu}; server, Postgres and autocannon on the same machine`,
    '',
    '| scenario | messages/s | p50 ms | p99 ms | event-loop delay p99 ms | responses |',
    '|---|---:|---:|---:|---:|---|',
    ...runs.map(
      (run) =>
        `| ${run.scenario} | ${format(run.perSecond)} | ${run.p50} | ${run.p99} | ${run.loopP99 === undefined ? '' : format(run.loopP99)} | ${run.statuses} |`,
    ),
    `| raw Postgres: the same rows with plain INSERTs (thread, message, search row; ${connections} connections) | ${format(raw)} | | | | |`,
    '',
    `Ingestion without attachment, a thread each (as the raw inserts), runs at ${(runs[0]!.perSecond / raw).toFixed(2)}× the raw insert rate; all in one thread, at ${(runs[1]!.perSecond / raw).toFixed(2)}×.`,
    '',
    ...(perMessage
      ? [
          `CPU per message of that first run (load average ${perMessage.load}): server ${perMessage.server.toFixed(2)} ms, its database's Postgres backends ${perMessage.postgres.toFixed(2)} ms (from /proc).`,
          '',
        ]
      : []),
  );
}
lines.push(
  "One mail of each raw-MIME shape through SendGrid's raw mode (bench/mime-shapes.ts), then short lines in SendGrid's and",
  "Mailgun's parsed fields, one at a time; the server's CPU",
  "time counts its event loop and its content workers; the event-loop delay is the server's own (prom-client), whose",
  `every sample holds its ${LOOP_SAMPLING_MS} ms sampling interval (the longest stall is the maximum less that); another request is`,
  'GET /health, sent one after another 10 ms apart while the mail is ingested (its slowest answer):',
  '',
  '| shape | MB | status | ms | server CPU ms | event-loop delay max ms | longest stall ms | another request, slowest ms | delay p99 ms |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...(shapeRuns ?? []).map(
    (run) =>
      `| ${run.shape} | ${run.megabytes.toFixed(1)} | ${run.status} | ${format(run.ms)} | ${format(run.cpuMs)} | ${format(run.loopMax)} | ${format(run.loopMax - LOOP_SAMPLING_MS)} | ${format(run.slowestOtherMs)} | ${format(run.loopP99)} |`,
  ),
);
const shapes = (shapeRuns ?? []).slice(1);
const worstBy = (figure: (run: ShapeRun) => number) =>
  shapes.reduce<ShapeRun | undefined>((a, b) => (a && figure(a) >= figure(b) ? a : b), undefined);
const [worstLoop, worstOther] = [worstBy((run) => run.loopMax), worstBy((run) => run.slowestOtherMs)];
if (worstLoop && worstOther) {
  lines.push(
    '',
    `Largest event-loop delay while a shape was ingested: ${format(worstLoop.loopMax)} ms, a stall of ${format(worstLoop.loopMax - LOOP_SAMPLING_MS)} ms (${worstLoop.shape}); slowest other request: ${format(worstOther.slowestOtherMs)} ms (${worstOther.shape}).`,
  );
}
console.log(lines.join('\n'));
