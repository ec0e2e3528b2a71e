/**
 * Measures inbox-api on a database seeded by seed.ts, the server running as its own process:
 *   - search (`GET /v1/messages?inbox_id=&q=`) for a common, a medium and a rare word, first
 *     without the trigram index, then with it (so the index's effect is measured);
 *   - the conversation view of the 100-message thread (`GET /v1/threads/{id}`);
 *   - sending (`POST /v1/messages`) with the local provider.
 *
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/inbox_bench pnpm --filter inbox-api bench:run [--seconds 15] [--connections 8] [--keep-index]
 *
 * Prints a Markdown table and writes the figures to bench/.results/<time>.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { VOCABULARY } from './corpus.js';
import { type LoadResult, runLoad } from './load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '8' },
    'keep-index': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const url = process.env.DATABASE_URL;
if (!url) throw new Error('Set DATABASE_URL to the database seed.ts filled');

const db = new pg.Client({ connectionString: url });
await db.connect();
const inboxIds = (await db.query<{ id: string }>('SELECT id FROM inboxes ORDER BY email_address')).rows.map((row) => row.id);
const [longThread] = (
  await db.query<{ id: string; message_count: number }>(
    'SELECT id, message_count FROM threads ORDER BY message_count DESC LIMIT 1',
  )
).rows;
const messageCount = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages')).rows[0]!.n;

// Words by frequency rank: 1 in ~7 messages, ~1 in 100, ~1 in 2,000 contain them.
const words = { common: VOCABULARY[3]!, medium: VOCABULARY[150]!, rare: VOCABULARY[5000]! };
const matchesPerInbox: Record<string, number> = {};
for (const [kind, word] of Object.entries(words)) {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM messages WHERE inbox_id = $1 AND search_text LIKE '%' || $2 || '%'",
    [inboxIds[0], word],
  );
  matchesPerInbox[kind] = rows[0]!.n;
}

const service = await startService('src/server.ts', {
  cwd: appRoot,
  env: {
    DATABASE_URL: url,
    PORT: '0',
    LOG_LEVEL: 'warn',
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LIMIT_PER_HOUR: '0',
    INBOX_API_KEYS: undefined,
  },
  timeoutMs: 60_000,
});
const load = (request: Parameters<typeof runLoad>[1]['request'], expectStatus = 200) =>
  runLoad(service.url, { request, expectStatus, connections, seconds });
const search = (word: string) =>
  load((i) => ({ method: 'GET', path: `/v1/messages?inbox_id=${inboxIds[i % inboxIds.length]}&q=${word}` }));

const results: Record<string, LoadResult> = {};
let indexSeconds: number | undefined;
try {
  if (!values['keep-index']) {
    await db.query('DROP INDEX IF EXISTS messages_search_text_trgm_idx');
    await db.query('ANALYZE messages');
    for (const [kind, word] of Object.entries(words)) results[`search ${kind} word, no trigram index`] = await search(word);
  }
  const started = Date.now();
  await db.query('CREATE INDEX IF NOT EXISTS messages_search_text_trgm_idx ON messages USING GIN (search_text gin_trgm_ops)');
  indexSeconds = (Date.now() - started) / 1000;
  await db.query('ANALYZE messages');
  for (const [kind, word] of Object.entries(words)) results[`search ${kind} word, trigram index`] = await search(word);

  results[`thread of ${longThread!.message_count} messages`] = await load(() => ({
    method: 'GET',
    path: `/v1/threads/${longThread!.id}`,
  }));
  results['send (local provider, outside recipient)'] = await load(
    (i) => ({
      method: 'POST',
      path: '/v1/messages',
      body: {
        inbox_id: inboxIds[i % inboxIds.length],
        to: ['peer@outside.example'],
        subject: `Bench ${i}`,
        body: `Hello **${i}**, see [this](https://example.com).`,
      },
    }),
    201,
  );
} finally {
  await service.stop();
  await db.end();
}

const rows = Object.entries(results).map(
  ([name, r]) => `| ${name} | ${r.perSecond} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ${JSON.stringify(r.statuses)} |`,
);
console.log(
  [
    `${messageCount} messages, ${inboxIds.length} inboxes; ${connections} connections, ${seconds} s per scenario; ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`,
    `words: ${JSON.stringify(words)}, matches in one inbox: ${JSON.stringify(matchesPerInbox)}; trigram index built in ${indexSeconds?.toFixed(0) ?? '?'} s`,
    '',
    '| scenario | req/s | p50 ms | p95 ms | p99 ms | max ms | statuses |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n'),
);
const out = path.join(appRoot, 'bench', '.results');
await mkdir(out, { recursive: true });
await writeFile(
  path.join(out, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  JSON.stringify({ messageCount, words, matchesPerInbox, indexSeconds, connections, seconds, results }, null, 2),
);
