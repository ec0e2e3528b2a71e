/**
 * Measures sending (`POST /v1/messages`, `local` provider) on a fresh database, the server running as
 * its own process with production settings: to an address outside the service, to an inbox of the
 * service (local delivery stores a second copy), and with a 50 KB attachment.
 *
 *   pnpm --filter inbox-api bench:send [--seconds 10] [--connections 1,8]
 *
 * Creates a scratch database on TEST_DATABASE_URL's server (default postgresql://postgres@127.0.0.1:5432)
 * and drops it afterwards. Prints a Markdown table.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createScratchDatabase } from '@repo/db/dev';
import { startService } from '@repo/testing';
import { appRoot, migrationsDir } from '../src/paths.js';
import { type LoadResult, runLoad } from './load.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '1,8' } },
});
const seconds = Number(values.seconds);
const concurrencies = values.connections.split(',').map(Number);

const database = await createScratchDatabase({ label: 'inbox_send_bench', migrationsDir });
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-send-bench-'));
const results: { scenario: string; connections: number; result: LoadResult }[] = [];
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
      INBOX_SEND_LIMIT_PER_HOUR: '0',
      INBOX_API_KEYS: undefined,
    },
    timeoutMs: 60_000,
    keepLogs: false,
  });
  try {
    const inboxIds: string[] = [];
    for (let i = 0; i < 16; i++) {
      const res = await fetch(`${service.url}/v1/inboxes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Bench ${i}`, email_username: `bench${i}` }),
      });
      inboxIds.push(((await res.json()) as { id: string }).id);
    }
    const attachment = randomBytes(50 * 1024).toString('base64');
    const scenarios: [string, (i: number) => Record<string, unknown>][] = [
      ['send to an outside address', () => ({ to: ['peer@outside.example'] })],
      ['send to an inbox of the service (local delivery)', (i) => ({ to: [`bench${(i + 1) % 16}@bench.test`] })],
      [
        'send with a 50 KB attachment',
        () => ({
          to: ['peer@outside.example'],
          attachments: [{ filename: 'report.bin', content_type: 'application/octet-stream', content: attachment }],
        }),
      ],
    ];
    for (const [scenario, extra] of scenarios) {
      for (const connections of concurrencies) {
        const result = await runLoad(service.url, {
          connections,
          seconds,
          request: (i) => ({
            method: 'POST',
            path: '/v1/messages',
            body: {
              inbox_id: inboxIds[i % inboxIds.length],
              subject: `Bench ${i}`,
              body: `Hello **${i}**, see [this](https://example.com).\n\nBest,\nBench`,
              ...extra(i),
            },
          }),
        });
        results.push({ scenario, connections, result });
        process.stderr.write(`${scenario} @${connections}: p50 ${result.p50} ms, p95 ${result.p95} ms, ${result.perSecond}/s\n`);
      }
    }
  } finally {
    await service.stop();
  }
} finally {
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}

const cpu = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`;
console.log(
  [
    `${seconds} s per run; ${cpu}; server, Postgres and load generator on the same machine`,
    '',
    '| scenario | connections | req/s | p50 ms | p95 ms | p99 ms | max ms | statuses |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      ({ scenario, connections, result: r }) =>
        `| ${scenario} | ${connections} | ${r.perSecond} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ${JSON.stringify(r.statuses)} |`,
    ),
  ].join('\n'),
);
