/**
 * Measures inbox-api on a database seeded by seed.ts, the server running as its own process with
 * production settings:
 *   - search (`GET /v1/messages?inbox_id=&q=`) for a common, a medium and a rare word, under each
 *     way of indexing the search text, so that the index is chosen by measurement;
 *   - the conversation view of the 100-message thread (`GET /v1/threads/{id}`);
 *   - sending (`POST /v1/messages`) with the local provider;
 *   - `GET /health`, the floor every request pays (logging, metrics, headers).
 * Each scenario runs at every concurrency given.
 *
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/inbox_bench pnpm --filter inbox-api bench:run \
 *     [--seconds 15] [--connections 1,8] [--indexes none,trigram,inbox-trigram]
 *
 * Leaves the database with the index the migrations create. Prints Markdown tables and writes the
 * figures to bench/.results/<time>.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfigOrExit, setting } from '@repo/config';
import { withClient } from '@repo/db';
import { startService } from '@repo/testing';
import { containsPattern } from '../src/messages/search.js';
import { appRoot } from '../src/paths.js';
import { VOCABULARY } from './corpus.js';
import { type LoadResult, runLoad } from './load.js';

/** Ways to index message_search's text; the migrations' choice (inbox-trigram) is rebuilt last. */
const INDEXES = {
  none: [],
  trigram: ['CREATE INDEX bench_search_idx ON message_search USING GIN (search_text gin_trgm_ops)'],
  'inbox-trigram': ['CREATE INDEX bench_search_idx ON message_search USING GIN (inbox_id uuid_ops, search_text gin_trgm_ops)'],
} as const;
type IndexKind = keyof typeof INDEXES;
type Request = Parameters<typeof runLoad>[1]['request'];

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '1,8' },
    indexes: { type: 'string', default: Object.keys(INDEXES).join(',') },
  },
});
const seconds = Number(values.seconds);
const concurrencies = values.connections.split(',').map(Number);
const indexKinds = values.indexes.split(',') as IndexKind[];
const { DATABASE_URL: url } = loadConfigOrExit(z.object({ DATABASE_URL: setting.postgresUrl() }));

// Searched words: of five letters or more (what people look for) at three frequencies, and as a
// worst case the third most frequent token, three letters long, in most messages.
const longWords = VOCABULARY.filter((word) => word.length >= 5);
const words = {
  common: longWords[0]!,
  medium: longWords[40]!,
  rare: longWords[1500]!,
  'short, in most messages': VOCABULARY[2]!,
};
const matchesPerInbox: Record<string, number> = {};
const indexBuildSeconds: Record<string, number> = {};
const results: { scenario: string; connections: number; result: LoadResult }[] = [];

const { inboxIds, messageCount } = await withClient(url, async (db) => {
  const inboxIds = (await db.query<{ id: string }>('SELECT id FROM inboxes ORDER BY email_address')).rows.map((row) => row.id);
  const [longThread] = (
    await db.query<{ id: string; message_count: number }>(
      'SELECT id, message_count FROM threads ORDER BY message_count DESC LIMIT 1',
    )
  ).rows;
  const messageCount = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages')).rows[0]!.n;
  const migrationIndex = (
    await db.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE indexname = 'message_search_text_idx'")
  ).rows[0]?.indexdef;
  if (!migrationIndex) throw new Error('message_search_text_idx is missing: seed the database with seed.ts');

  // Counted with the pattern the API searches with.
  for (const [kind, word] of Object.entries(words)) {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM message_search WHERE inbox_id = $1 AND search_text LIKE $2',
      [inboxIds[0], containsPattern(word)],
    );
    matchesPerInbox[kind] = rows[0]!.n;
  }

  const service = await startService('src/server.ts', {
    cwd: appRoot,
    // Production settings (one JSON log line per request), without the limits a benchmark would hit.
    env: {
      DATABASE_URL: url,
      PORT: '0',
      LOG_LEVEL: 'info',
      INBOX_RATE_LIMIT_PER_MINUTE: '0',
      INBOX_SEND_LIMIT_PER_HOUR: '0',
      INBOX_API_KEYS: undefined,
    },
    timeoutMs: 60_000,
    keepLogs: false,
  });

  async function measure(scenario: string, request: Request) {
    for (const connections of concurrencies) {
      const result = await runLoad(service.url, { request, connections, seconds });
      results.push({ scenario, connections, result });
      process.stderr.write(`${scenario} @${connections}: p50 ${result.p50} ms, p95 ${result.p95} ms, ${result.perSecond}/s\n`);
    }
  }

  try {
    await db.query('DROP INDEX IF EXISTS message_search_text_idx');
    for (const kind of indexKinds) {
      await db.query('DROP INDEX IF EXISTS bench_search_idx');
      const started = Date.now();
      for (const sql of INDEXES[kind]) await db.query(sql);
      indexBuildSeconds[kind] = (Date.now() - started) / 1000;
      await db.query('ANALYZE message_search');
      for (const [frequency, word] of Object.entries(words)) {
        await measure(`search, ${frequency} word, index: ${kind}`, (i) => ({
          method: 'GET',
          path: `/v1/messages?inbox_id=${inboxIds[i % inboxIds.length]}&q=${word}`,
        }));
      }
    }
    await db.query('DROP INDEX IF EXISTS bench_search_idx');
    await db.query(migrationIndex);
    await db.query('ANALYZE message_search');

    await measure('GET /health', () => ({ method: 'GET', path: '/health' }));
    await measure(`thread of ${longThread!.message_count} messages`, () => ({
      method: 'GET',
      path: `/v1/threads/${longThread!.id}`,
    }));
    await measure('send (local provider, outside recipient)', (i) => ({
      method: 'POST',
      path: '/v1/messages',
      body: {
        inbox_id: inboxIds[i % inboxIds.length],
        to: ['peer@outside.example'],
        subject: `Bench ${i}`,
        body: `Hello **${i}**, see [this](https://example.com).`,
      },
    }));
  } finally {
    await service.stop();
  }
  return { inboxIds, messageCount };
});

const cpu = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`;
console.log(
  [
    `${messageCount} messages in ${inboxIds.length} inboxes; ${seconds} s per run; ${cpu}; server, Postgres and load generator on the same machine`,
    `words ${JSON.stringify(words)}: messages of one inbox (of ${Math.round(messageCount / inboxIds.length)}) that contain them ${JSON.stringify(matchesPerInbox)}`,
    `index build seconds: ${JSON.stringify(indexBuildSeconds)}`,
    '',
    '| scenario | connections | req/s | p50 ms | p95 ms | p99 ms | max ms | statuses |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      ({ scenario, connections, result: r }) =>
        `| ${scenario} | ${connections} | ${r.perSecond} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ${JSON.stringify(r.statuses)} |`,
    ),
  ].join('\n'),
);
const out = path.join(appRoot, 'bench', '.results');
await mkdir(out, { recursive: true });
await writeFile(
  path.join(out, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  JSON.stringify({ messageCount, words, matchesPerInbox, indexBuildSeconds, seconds, cpu, results }, null, 2),
);
