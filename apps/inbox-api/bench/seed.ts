/**
 * Seeds a benchmark database: `--messages` messages (default 1,000,000) over `--inboxes` inboxes
 * (default 100), in threads of 1 to 19 messages, the first thread of the first inbox holding 100;
 * 5% of messages carry an attachment record. Text is deterministic (seeded).
 *
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/inbox_bench pnpm --filter inbox-api bench:seed
 *
 * The database is created and migrated if needed, and must be empty of inboxes.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfigOrExit, setting } from '@repo/config';
import { migrateDatabase, withClient } from '@repo/db';
import { searchTextOf } from '../src/messages/search.js';
import { migrationsDir } from '../src/paths.js';
import { subjectKey } from '../src/threads/threading.js';
import { seededRandom, sentence, zipfWord } from './corpus.js';
import { progressBar } from './progress.js';

const { values } = parseArgs({
  options: { messages: { type: 'string', default: '1000000' }, inboxes: { type: 'string', default: '100' } },
});
const totalMessages = Number(values.messages);
const inboxCount = Number(values.inboxes);
const { DATABASE_URL: url } = loadConfigOrExit(z.object({ DATABASE_URL: setting.postgresUrl() }));

await migrateDatabase(url, migrationsDir, { createDatabase: true });
const summary = await withClient(url, async (client) => {
  const { rows: existing } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM inboxes');
  if (existing[0]!.n > 0) throw new Error('The benchmark database already has inboxes; use an empty one');

  const random = seededRandom(42);
  const DOMAIN = 'inbox.bench';
  const START = Date.parse('2025-01-01T00:00:00Z');
  const YEAR_MS = 365 * 24 * 3600 * 1000;

  const inboxes = Array.from({ length: inboxCount }, (_, i) => ({ id: randomUUID(), address: `bench-${i}@${DOMAIN}` }));
  await client.query('INSERT INTO inboxes (id, name, email_address) SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[])', [
    inboxes.map((inbox) => inbox.id),
    inboxes.map((_, i) => `Bench ${i}`),
    inboxes.map((inbox) => inbox.address),
  ]);

  // Building the search index once at the end is much faster than maintaining it row by row.
  // The full-text (search_vector) and label indexes too.
  const { rows: searchIndexes } = await client.query<{ indexname: string; indexdef: string }>(
    `SELECT indexname, indexdef FROM pg_indexes
      WHERE indexname IN ('message_search_text_idx', 'message_search_vector_idx', 'messages_inbox_labels_idx')`,
  );
  for (const index of searchIndexes) await client.query(`DROP INDEX ${index.indexname}`);

  type Column = unknown[];
  const batch = { messages: [] as Column[], threads: [] as Column[], attachments: [] as Column[] };
  const MESSAGE_COLUMNS = 17;
  const reset = () => {
    batch.messages = Array.from({ length: MESSAGE_COLUMNS }, () => []);
    batch.threads = Array.from({ length: 9 }, () => []);
    batch.attachments = Array.from({ length: 8 }, () => []);
  };
  reset();

  async function flush() {
    const [t, m, a] = [batch.threads, batch.messages, batch.attachments];
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO threads (id, inbox_id, subject, last_message_at, message_count, participants, created_at, subject_key)
       SELECT id, inbox, subject, last_at, count, ARRAY[p1, p2], created, key FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::int[], $6::text[], $7::text[], $8::timestamptz[], $9::text[])
         AS t(id, inbox, subject, last_at, count, p1, p2, created, key)`,
      t,
    );
    await client.query(
      `INSERT INTO messages (id, thread_id, inbox_id, direction, status, provider_message_id, subject, from_address, to_addresses,
                             cc_addresses, bcc_addresses, reply_to_addresses, text, html, content_clean, preview, size, in_reply_to,
                             "references", timestamp, created_at)
       SELECT id, thread, inbox, direction::"MessageDirection",
              (CASE direction WHEN 'inbound' THEN 'received' ELSE 'sent' END)::"MessageStatus", mid, subject, sender,
              ARRAY[recipient], '{}', '{}', '{}', text, html, clean, preview, size, reply_to, refs, ts, ts
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                     $11::text[], $12::text[], $13::int[], $14::text[], $15::text[], $16::timestamptz[])
           AS m(id, thread, inbox, direction, mid, subject, sender, recipient, text, html, clean, preview, size, reply_to, refs, ts)`,
      m.slice(0, 16),
    );
    await client.query(
      `INSERT INTO message_search (message_id, thread_id, inbox_id, created_at, search_text)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::text[])`,
      [m[0], m[1], m[2], m[15], m[16]],
    );
    await client.query(
      `INSERT INTO attachments (id, message_id, inbox_id, thread_id, filename, content_type, size, storage_backend, storage_key, content_hash)
       SELECT id, message, inbox, thread, filename, 'application/pdf', size, 'local', key, hash
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::int[], $7::text[], $8::text[])
           AS a(id, message, inbox, thread, filename, size, key, hash)`,
      a,
    );
    await client.query('COMMIT');
    reset();
  }

  const perInbox = Math.floor(totalMessages / inboxCount);
  const bar = progressBar('messages', perInbox * inboxCount);
  let written = 0;
  const seedStarted = Date.now();
  for (const [inboxIndex, inbox] of inboxes.entries()) {
    let remaining = perInbox;
    let firstThread = true;
    while (remaining > 0) {
      const size = Math.min(remaining, inboxIndex === 0 && firstThread ? 100 : 1 + Math.floor(random() * 19));
      firstThread = false;
      remaining -= size;
      const threadId = randomUUID();
      const peer = `${zipfWord(random)}.${zipfWord(random)}@${zipfWord(random)}.example`;
      const subject = sentence(random, 3 + Math.floor(random() * 6));
      let at = START + random() * YEAR_MS;
      const ids: string[] = [];
      for (let i = 0; i < size; i++) {
        at += random() * 6 * 3600 * 1000;
        const inbound = i % 2 === 0;
        const text = sentence(random, 40 + Math.floor(random() * 80));
        const id = randomUUID();
        const mid = `<${id}@bench>`;
        const attachment = random() < 0.05 ? `${zipfWord(random)}-${zipfWord(random)}.pdf` : undefined;
        const sender = inbound ? peer : inbox.address;
        const values = [
          id,
          threadId,
          inbox.id,
          inbound ? 'inbound' : 'outbound',
          mid,
          i === 0 ? subject : `Re: ${subject}`,
          sender,
          inbound ? inbox.address : peer,
          text,
          `<p>${text}</p>`,
          text,
          text.slice(0, 120),
          text.length * 2,
          ids.at(-1) ?? null,
          ids.length ? ids.slice(-20).join(' ') : null,
          new Date(at).toISOString(),
          searchTextOf({ subject, fromAddress: sender, text, attachmentFilenames: attachment ? [attachment] : [] }),
        ];
        values.forEach((value, column) => batch.messages[column]!.push(value));
        ids.push(mid);
        if (attachment) {
          [
            randomUUID(),
            id,
            inbox.id,
            threadId,
            attachment,
            1000,
            `inboxes/${inbox.id}/attachments/${randomUUID()}`,
            `sha256:${'0'.repeat(64)}`,
          ].forEach((value, column) => batch.attachments[column]!.push(value));
        }
      }
      [
        threadId,
        inbox.id,
        subject,
        new Date(at).toISOString(),
        size,
        peer,
        inbox.address,
        new Date(START).toISOString(),
        subjectKey(subject),
      ].forEach((value, column) => batch.threads[column]!.push(value));
      written += size;
      if (batch.messages[0]!.length >= 5000) {
        await flush();
        bar.tick(written);
      }
    }
  }
  await flush();
  bar.finish();
  const seedSeconds = (Date.now() - seedStarted) / 1000;

  const indexStarted = Date.now();
  process.stderr.write('building the search indexes... ');
  for (const index of searchIndexes) await client.query(index.indexdef);
  const indexSeconds = (Date.now() - indexStarted) / 1000;
  await client.query('ANALYZE');
  process.stderr.write(`${indexSeconds.toFixed(0)}s\n`);

  const {
    rows: [sizes],
  } = await client.query<{ table: string; index: string }>(
    `SELECT pg_size_pretty(pg_total_relation_size('messages')) AS table, pg_size_pretty(pg_relation_size('message_search_text_idx')) AS index`,
  );
  return {
    messages: written,
    inboxes: inboxCount,
    seedSeconds,
    indexSeconds,
    messagesTotalSize: sizes!.table,
    searchIndexSize: sizes!.index,
  };
});
console.log(JSON.stringify(summary));
