/**
 * Large downloads and the rest of the service: rounds of concurrent downloads of one large
 * attachment (`format=base64`, then `format=binary` for comparison) while `/health` is asked in a
 * loop. Prints, per format, the slowest `/health` answer, the server's event-loop delay (max and
 * p99, from its /metrics) and how far its resident memory grew above what it was before.
 *
 *   pnpm --filter inbox-api bench:downloads [--megabytes 25] [--concurrency 4] [--rounds 3] [--storage local|database]
 *
 * The server runs as its own process with production settings on a scratch database (service.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { metricValue } from '@repo/testing';
import { probeHealth, withBenchService } from './service.js';

const { values } = parseArgs({
  options: {
    megabytes: { type: 'string', default: '25' },
    concurrency: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    storage: { type: 'string', default: 'local' },
  },
});
const size = Number(values.megabytes) * 1024 * 1024;
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);

interface Sample {
  healthMaxMs: number;
  loopMaxMs: number;
  loopP99Ms: number;
  rssGrowthMb: number;
  seconds: number;
}

/** The server's metrics that matter here; prom-client resets the event-loop histogram at each scrape. */
async function scrape(url: string): Promise<{ rss: number; loopMax: number; loopP99: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => metricValue(text, name);
  return {
    rss: value('process_resident_memory_bytes'),
    loopMax: value('nodejs_eventloop_lag_max_seconds') * 1000,
    loopP99: value('nodejs_eventloop_lag_p99_seconds') * 1000,
  };
}

/** Reads a response to its end without keeping it: its length and SHA-256. */
async function drain(res: Response): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    hash.update(chunk);
  }
  return { bytes, sha256: hash.digest('hex') };
}

async function round(url: string, downloadUrl: string, format: 'base64' | 'binary', expected: string): Promise<Sample> {
  const before = await scrape(url);
  // /health is timed from a thread of its own, so that reading the downloads here does not delay it.
  const stopHealth = await probeHealth(url, { intervalMs: 0 });
  let running = true;
  let loopMaxMs = 0;
  let loopP99Ms = 0;
  let rssMax = before.rss;
  const watch = (async () => {
    while (running) {
      const now = await scrape(url);
      loopMaxMs = Math.max(loopMaxMs, now.loopMax);
      loopP99Ms = Math.max(loopP99Ms, now.loopP99);
      rssMax = Math.max(rssMax, now.rss);
    }
  })();
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const res = await fetch(`${downloadUrl}&format=${format}`);
      if (res.status !== 200) throw new Error(`download answered ${res.status}`);
      const announced = Number(res.headers.get('content-length'));
      const read = await drain(res);
      if (read.bytes !== announced) throw new Error(`read ${read.bytes} bytes of the ${announced} announced`);
      return read.sha256;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  running = false;
  const [healthMaxMs] = await Promise.all([stopHealth(), watch]);
  if (results.some((sha256) => sha256 !== expected)) throw new Error(`a ${format} download differs from the others`);
  return { healthMaxMs, loopMaxMs, loopP99Ms, rssGrowthMb: (rssMax - before.rss) / 1024 / 1024, seconds };
}

const samples: Record<'base64' | 'binary', Sample[]> = { base64: [], binary: [] };
await withBenchService(
  'downloads',
  { INBOX_MAX_ATTACHMENT_BYTES: String(size), STORAGE_BACKEND: values.storage },
  async (service) => {
    const post = async (route: string, body: unknown) => {
      const res = await fetch(`${service.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${route} answered ${res.status}: ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    const inbox = await post('/v1/inboxes', { name: 'Bench', email_username: 'bench' });
    const content = randomBytes(size);
    const sent = (await post('/v1/messages', {
      inbox_id: inbox.id,
      to: ['someone@example.com'],
      subject: 'Large file',
      body: 'Attached.',
      attachments: [{ filename: 'large.bin', content_type: 'application/octet-stream', content: content.toString('base64') }],
    })) as { attachments: { id: string }[] };
    const metadata = (await (await fetch(`${service.url}/v1/attachments/${sent.attachments[0]!.id}`)).json()) as {
      download_url: string;
    };
    const json = JSON.stringify({
      content: content.toString('base64'),
      content_type: 'application/octet-stream',
      filename: 'large.bin',
    });
    const expected = {
      base64: createHash('sha256').update(json).digest('hex'),
      binary: createHash('sha256').update(content).digest('hex'),
    };
    for (const format of ['base64', 'binary'] as const) {
      for (let i = 0; i < rounds; i++)
        samples[format].push(await round(service.url, metadata.download_url, format, expected[format]));
    }
  },
);

const cpu = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`;
const worst = (list: Sample[], key: keyof Sample) => Math.max(...list.map((sample) => sample[key]));
const format = (value: number) => value.toFixed(value < 10 ? 1 : 0);
console.log(
  [
    `${rounds} rounds of ${concurrency} concurrent downloads of a ${values.megabytes} MB attachment (${values.storage} storage); ` +
      `${cpu}; server, Postgres and client on the same machine. Worst round:`,
    '',
    '| format | /health max ms | event-loop delay max ms | event-loop delay p99 ms | RSS growth MB | seconds a round |',
    '|---|---:|---:|---:|---:|---:|',
    ...(['base64', 'binary'] as const).map(
      (name) =>
        `| ${name} | ${format(worst(samples[name], 'healthMaxMs'))} | ${format(worst(samples[name], 'loopMaxMs'))} | ` +
        `${format(worst(samples[name], 'loopP99Ms'))} | ${format(worst(samples[name], 'rssGrowthMb'))} | ${format(worst(samples[name], 'seconds'))} |`,
    ),
  ].join('\n'),
);
