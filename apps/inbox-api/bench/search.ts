/**
 * Measures search on a database seeded by seed.ts (1,000,000 messages in 100 inboxes of one
 * organization), the server running as its own process with production settings: the search of
 * every inbox in reach (`GET /v1/search?q=`, ranked, with snippets) next to today's per-inbox
 * search (`GET /v1/messages?inbox_id=&q=`), for a rare, an uncommon, a medium and a common word,
 * at each concurrency given.
 *
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/inbox_bench pnpm --filter inbox-api bench:search \
 *     [--seconds 10] [--connections 1,4]
 *
 * Seed the database once with seed.ts; every run reuses it (nothing here writes to it).
 *
 * Prints a Markdown table (with the machine's load average before and after) and writes the
 * figures to bench/.results/search-<time>.json. Besides latencies, each row gives the CPU time
 * per request of the server process and of its Postgres backends (from /proc, over the whole
 * run including its warm-up): on a shared machine latency follows the load, CPU per request much
 * less, so compare changes by it.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { z } from 'zod';
import { loadConfigOrExit, setting } from '@repo/config';
import { withClient } from '@repo/db';
import { startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { VOCABULARY } from './corpus.js';
import { type LoadResult, runLoad } from './load.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '1,4' } },
});
const seconds = Number(values.seconds);
const concurrencies = values.connections.split(',').map(Number);
const { DATABASE_URL: url } = loadConfigOrExit(z.object({ DATABASE_URL: setting.postgresUrl() }));

// The words run.ts searches for (five letters or more) at three frequencies, and one in about 1 %
// of messages: about where the planner turns from the GIN bitmap to reading newest first, the
// costliest frequency for GET /v1/search.
const longWords = VOCABULARY.filter((word) => word.length >= 5);
const words = { rare: longWords[1500]!, uncommon: longWords[300]!, medium: longWords[40]!, common: longWords[0]! };
const load = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const loadBefore = load();
interface Row {
  scenario: string;
  word: string;
  connections: number;
  result: LoadResult;
  /** CPU ms per request: the server process, its Postgres backends. */
  cpu: { server: number; postgres: number };
}
const results: Row[] = [];

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux; 0 once it has exited). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/** The CPU ms of the server and of the database's other backends (the server's pool), summed. */
async function cpuNow(monitor: pg.Client, serverPid: number): Promise<{ server: number; postgres: Map<number, number> }> {
  const { rows } = await monitor.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const postgres = new Map(await Promise.all(rows.map(async ({ pid }) => [pid, await cpuMs(pid)] as const)));
  return { server: await cpuMs(serverPid), postgres };
}

const { inboxIds, messageCount, matches } = await withClient(url, async (db) => {
  const inboxIds = (await db.query<{ id: string }>('SELECT id FROM inboxes ORDER BY email_address')).rows.map((row) => row.id);
  const messageCount = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages')).rows[0]!.n;
  await db.query('ANALYZE message_search');
  const matches: Record<string, number> = {};
  for (const [kind, word] of Object.entries(words)) {
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM message_search WHERE search_vector @@ websearch_to_tsquery('english', $1)",
      [word],
    );
    matches[kind] = rows[0]!.n;
  }
  return { inboxIds, messageCount, matches };
});

const service = await startService('src/server.ts', {
  cwd: appRoot,
  env: {
    DATABASE_URL: url,
    PORT: '0',
    LOG_LEVEL: 'info',
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_API_KEYS: undefined,
  },
  timeoutMs: 60_000,
  keepLogs: false,
});
try {
  await withClient(url, async (monitor) => {
    for (const [frequency, word] of Object.entries(words)) {
      for (const connections of concurrencies) {
        for (const [scenario, request] of [
          ['GET /v1/search (100 inboxes)', () => ({ method: 'GET' as const, path: `/v1/search?q=${word}` })],
          [
            'GET /v1/messages?inbox_id=&q= (one inbox)',
            (i: number) => ({ method: 'GET' as const, path: `/v1/messages?inbox_id=${inboxIds[i % inboxIds.length]}&q=${word}` }),
          ],
        ] as const) {
          const before = await cpuNow(monitor, service.child.pid!);
          const result = await runLoad(service.url, { request, connections, seconds });
          const after = await cpuNow(monitor, service.child.pid!);
          // Backends opened during the run count from zero.
          let postgres = 0;
          for (const [pid, ms] of after.postgres) postgres += ms - (before.postgres.get(pid) ?? 0);
          const perRequest = (ms: number) => Math.round((ms / Math.max(1, result.sent)) * 100) / 100;
          const cpu = { server: perRequest(after.server - before.server), postgres: perRequest(postgres) };
          results.push({ scenario, word: `${frequency} (${word})`, connections, result, cpu });
          process.stderr.write(
            `${scenario}, ${frequency} @${connections}: p50 ${result.p50} ms, p95 ${result.p95} ms, CPU/request server ${cpu.server} ms, Postgres ${cpu.postgres} ms\n`,
          );
        }
      }
    }
  });
} finally {
  await service.stop();
}

const cpu = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`;
console.log(
  [
    `${messageCount} messages in ${inboxIds.length} inboxes; ${seconds} s per run; ${cpu}; load average before ${loadBefore}, after ${load()}`,
    `messages matching each word (full text, all inboxes): ${JSON.stringify(matches)}`,
    `options: --seconds ${seconds} --connections ${concurrencies.join(',')}; goal (issue 26): GET /v1/search p95 < 50 ms at 1 and 4 clients`,
    'CPU ms/req: user + system time of the server process, and of its Postgres backends, per request sent (warm-up included)',
    '',
    '| scenario | word | clients | req/s | p50 ms | p95 ms | p99 ms | CPU ms/req server | CPU ms/req Postgres | statuses |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      ({ scenario, word, connections, result: r, cpu: c }) =>
        `| ${scenario} | ${word} | ${connections} | ${r.perSecond} | ${r.p50} | ${r.p95} | ${r.p99} | ${c.server} | ${c.postgres} | ${JSON.stringify(r.statuses)} |`,
    ),
  ].join('\n'),
);
const out = path.join(appRoot, 'bench', '.results');
await mkdir(out, { recursive: true });
await writeFile(
  path.join(out, `search-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  JSON.stringify({ messageCount, words, matches, seconds, cpu, loadBefore, results }, null, 2),
);
