import { applyMigrations, readMigrations, withClient } from '@repo/db';
import { createScratchDatabase } from '@repo/db/dev';
import { describeSchemaDrift } from '@repo/testing';
import { appRoot, migrationsDir } from '../src/paths.js';
import { normalizeSubject, subjectKey } from '../src/threads/threading.js';
import { createTestContext, type TestContext } from './context.js';

describeSchemaDrift({ appRoot, migrationsDir });

describe('database constraints', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.close());

  async function messageIn(inboxId: string, providerMessageId: string) {
    const thread = await ctx.db.thread.create({
      data: { inboxId, subject: 's', subjectKey: 's', lastMessageAt: new Date(), messageCount: 1, participants: [] },
    });
    return ctx.db.message.create({
      data: {
        threadId: thread.id,
        inboxId,
        direction: 'inbound',
        status: 'received',
        providerMessageId,
        subject: 's',
        fromAddress: 'a@example.com',
        toAddresses: [],
        ccAddresses: [],
        bccAddresses: [],
        replyToAddresses: [],
        text: '',
        html: '',
        contentClean: '',
        preview: '',
        size: 0,
        timestamp: new Date(),
        search: { create: { inboxId, threadId: thread.id, createdAt: new Date(), searchText: 's' } },
        attachments: {
          create: {
            inboxId,
            threadId: thread.id,
            filename: 'f',
            contentType: 'text/plain',
            size: 0,
            storageBackend: 'local',
            storageKey: 'k',
            contentHash: 'sha256:x',
          },
        },
      },
    });
  }

  it('stores a Message-ID once per inbox: a redelivery cannot add a second copy', async () => {
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) => ctx.db.inbox.create({ data: { name, emailAddress: `${name}@schema.test` } })),
    );
    await messageIn(a!.id, '<m1@example.com>');
    await expect(messageIn(a!.id, '<m1@example.com>')).rejects.toMatchObject({ code: 'P2002' });
    await messageIn(b!.id, '<m1@example.com>');
  });

  it('indexes in btrees only text whose length something bounds (a btree row holds ~2,700 bytes)', async () => {
    // Each text column of a btree index (unique ones and primary keys included), and what keeps it short.
    const bounded = {
      'inboxes.email_address': 'a local part of at most 64 ASCII characters (inboxes/schemas.ts) and INBOX_EMAIL_DOMAIN',
      'threads.subject_key': 'a SHA-256 in hex, 64 characters (threading.ts, subjectKey)',
      'messages.provider_message_id': 'at most 998 bytes (inbound-mail.ts, capMessageId); ours are <uuid@domain>',
      'idempotency_keys.key': 'at most 255 printable ASCII characters (messages/idempotency.ts)',
      'pending_objects.storage_key': 'made by the service (inboxes/<id>/attachments/<uuid>)',
      'stored_objects.key': 'made by the service',
      'webhook_tokens.token': 'at most 256 printable ASCII characters (webhooks/verify.ts)',
      'organizations.id': 'a UUID or `default`, made by the service',
      'inboxes.organization_id': 'an organizations.id',
      'api_keys.organization_id': 'an organizations.id',
      'api_keys.secret_hash': 'a SHA-256 in hex, 64 characters (api-keys/secrets.ts)',
      'events.organization_id': "an organizations.id (the inbox's, copied by events/log.ts)",
      'list_entries.organization_id': 'an organizations.id',
      'inbox_contacts.address': 'a recipient address of a send, at most 320 characters (messages/schemas.ts)',
      'drafts.idempotency_key': 'at most 255 printable ASCII characters (messages/idempotency.ts)',
      'messages.transport_message_id': 'at most 998 characters (outbox.ts, markSent); providers give 20 to 100',
      'webhooks.organization_id': 'an organizations.id',
      'webhook_deliveries.status': '`pending`, `delivered` or `failed` (webhooks-out/deliver.ts)',
      'message_body_parts.body': '`text`, `html` or `content_clean` (messages/records.ts, writeBodyParts)',
    };
    const rows = await ctx.db.$queryRaw<{ column: string }[]>`
      SELECT DISTINCT t.relname || '.' || a.attname AS column
        FROM pg_index i
        JOIN pg_class ic ON ic.oid = i.indexrelid
        JOIN pg_am am ON am.oid = ic.relam
        JOIN pg_class t ON t.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY (i.indkey)
       WHERE n.nspname = 'public' AND am.amname = 'btree' AND t.relname <> '_prisma_migrations'
         AND a.atttypid IN ('text'::regtype, 'varchar'::regtype, 'text[]'::regtype)`;
    expect(rows.map((row) => row.column).sort()).toEqual(Object.keys(bounded).sort());
    // Expression indexes would hide their columns from that list: there are none.
    const expressions = await ctx.db.$queryRaw<{ count: number }[]>`
      SELECT count(*)::int AS count FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE n.nspname = 'public' AND i.indexprs IS NOT NULL`;
    expect(expressions[0]!.count).toBe(0);
  });

  it("deletes an inbox's threads, messages, search rows, attachment rows and idempotency keys with it", async () => {
    const inbox = await ctx.db.inbox.create({ data: { name: 'gone', emailAddress: 'gone@schema.test' } });
    const message = await messageIn(inbox.id, '<m2@example.com>');
    await ctx.db.idempotencyKey.create({ data: { inboxId: inbox.id, key: 'k', requestHash: 'h' } });
    await ctx.db.inbox.delete({ where: { id: inbox.id } });
    const left = await Promise.all([
      ctx.db.thread.count({ where: { inboxId: inbox.id } }),
      ctx.db.message.count({ where: { id: message.id } }),
      ctx.db.messageSearch.count({ where: { messageId: message.id } }),
      ctx.db.attachment.count({ where: { messageId: message.id } }),
      ctx.db.idempotencyKey.count({ where: { inboxId: inbox.id } }),
    ]);
    expect(left).toEqual([0, 0, 0, 0, 0]);
  });
});

describe('migration 20261125143000_subject_key_digest', () => {
  it('turns the subject keys of existing threads into the digests the service looks threads up by', async () => {
    const database = await createScratchDatabase({ label: 'inbox_subject_keys' });
    try {
      const migrations = await readMigrations(migrationsDir);
      const before = migrations.filter((migration) => migration.name < '20261125143000');
      const subjects = ['Quarterly numbers', 'Re: Grüße aus Köln', '☃ '.repeat(200), 'Re:'];
      await withClient(database.url, async (client) => {
        await applyMigrations(client, before);
        const {
          rows: [inbox],
        } = await client.query<{ id: string }>(
          `INSERT INTO inboxes (id, name, email_address) VALUES (gen_random_uuid(), 'a', 'a@schema.test') RETURNING id`,
        );
        for (const subject of subjects) {
          // As the service wrote them before: the normalised subject itself.
          await client.query(
            `INSERT INTO threads (id, inbox_id, subject, subject_key, last_message_at, participants)
             VALUES (gen_random_uuid(), $1, $2, $3, now(), '{}')`,
            [inbox!.id, subject, normalizeSubject(subject)],
          );
        }
        await applyMigrations(client, migrations);
        const { rows } = await client.query<{ subject: string; subject_key: string }>('SELECT subject, subject_key FROM threads');
        expect(new Map(rows.map((row) => [row.subject, row.subject_key]))).toEqual(
          new Map(subjects.map((subject) => [subject, subjectKey(subject)])),
        );
      });
    } finally {
      await database.drop();
    }
  });
});

describe('migration 20261125175613_organizations_api_keys', () => {
  it('puts the inboxes there are into the organization `default`, which it creates', async () => {
    const database = await createScratchDatabase({ label: 'inbox_organizations' });
    try {
      const migrations = await readMigrations(migrationsDir);
      const before = migrations.filter((migration) => migration.name < '20261125175613');
      await withClient(database.url, async (client) => {
        await applyMigrations(client, before);
        await client.query(
          `INSERT INTO inboxes (id, name, email_address) VALUES (gen_random_uuid(), 'a', 'a@schema.test'), (gen_random_uuid(), 'b', 'b@schema.test')`,
        );
        await applyMigrations(client, migrations);
        const { rows: organizations } = await client.query('SELECT id, name FROM organizations');
        expect(organizations).toEqual([{ id: 'default', name: 'default' }]);
        const { rows: inboxes } = await client.query('SELECT organization_id FROM inboxes');
        expect(inboxes).toEqual([{ organization_id: 'default' }, { organization_id: 'default' }]);
        // An inbox that names no organization still lands in `default`; one naming none that exists is refused.
        await client.query(`INSERT INTO inboxes (id, name, email_address) VALUES (gen_random_uuid(), 'c', 'c@schema.test')`);
        await expect(
          client.query(
            `INSERT INTO inboxes (id, name, email_address, organization_id) VALUES (gen_random_uuid(), 'd', 'd@schema.test', 'nope')`,
          ),
        ).rejects.toMatchObject({ code: '23503' });
      });
    } finally {
      await database.drop();
    }
  });
});

describe('migration 20261126022630_system_labels', () => {
  it('gives existing messages their system labels, ahead of those they had', async () => {
    const database = await createScratchDatabase({ label: 'inbox_labels' });
    try {
      const migrations = await readMigrations(migrationsDir);
      const before = migrations.filter((migration) => migration.name < '20261126022630');
      await withClient(database.url, async (client) => {
        await applyMigrations(client, before);
        const {
          rows: [inbox],
        } = await client.query<{ id: string }>(
          `INSERT INTO inboxes (id, name, email_address) VALUES (gen_random_uuid(), 'a', 'a@schema.test') RETURNING id`,
        );
        const {
          rows: [thread],
        } = await client.query<{ id: string }>(
          `INSERT INTO threads (id, inbox_id, subject, subject_key, last_message_at, participants)
           VALUES (gen_random_uuid(), $1, 's', '', now(), '{}') RETURNING id`,
          [inbox!.id],
        );
        const rows: [string, string, string[]][] = [
          ['<in-1@x>', 'inbound', []],
          ['<in-2@x>', 'inbound', ['spam']],
          ['<out-1@x>', 'outbound', []],
        ];
        for (const [id, direction, labels] of rows) {
          await client.query(
            `INSERT INTO messages (id, thread_id, inbox_id, direction, status, provider_message_id, subject, from_address,
                                   to_addresses, cc_addresses, bcc_addresses, reply_to_addresses, text, html, content_clean,
                                   preview, size, labels, timestamp)
             VALUES (gen_random_uuid(), $1, $2, $3::"MessageDirection", $4::"MessageStatus", $5, 's', 'a@x', '{}', '{}', '{}',
                     '{}', '', '', '', '', 0, $6::text[], now())`,
            [thread!.id, inbox!.id, direction, direction === 'inbound' ? 'received' : 'sent', id, labels],
          );
        }
        await applyMigrations(client, migrations);
        const { rows: labelled } = await client.query<{ provider_message_id: string; labels: string[] }>(
          'SELECT provider_message_id, labels FROM messages ORDER BY provider_message_id',
        );
        expect(labelled).toEqual([
          { provider_message_id: '<in-1@x>', labels: ['received', 'unread'] },
          { provider_message_id: '<in-2@x>', labels: ['received', 'unread', 'spam'] },
          { provider_message_id: '<out-1@x>', labels: ['sent'] },
        ]);
      });
    } finally {
      await database.drop();
    }
  });
});
