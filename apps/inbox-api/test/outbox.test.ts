import { readdir } from 'node:fs/promises';
import path from 'node:path';
import request from 'supertest';
import { pgTransaction } from '@repo/db';
import { pgStatements, prismaStatements } from '../src/database.js';
import { settlePendingObjects } from '../src/messages/attachments.js';
import { reconcile } from '../src/reconciler.js';
import { createTestContext, type TestContext } from './context.js';
import { startProvider } from './mail/helpers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const createInbox = async (app: TestContext['app'], username: string) =>
  (await request(app).post('/v1/inboxes').send({ name: username, email_username: username }).expect(201)).body as {
    id: string;
    email_address: string;
  };

/** Every object file under the data folder's object store, temporary ones included. */
async function storedFiles(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'objects');
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

describe('sending to the inbox’s own address', () => {
  it('stores both copies, sent and received, in one thread', async () => {
    const self = await createInbox(ctx.app, 'self');
    const res = await request(ctx.app)
      .post('/v1/messages')
      .send({ inbox_id: self.id, to: [self.email_address], subject: 'Note to self', body: 'Remember **this**' });
    expect(res.status).toBe(201);

    const messages = await ctx.db.message.findMany({ where: { inboxId: self.id }, orderBy: { direction: 'asc' } });
    expect(messages.map((message) => [message.direction, message.status, message.threadId])).toEqual([
      ['inbound', 'received', res.body.thread_id],
      ['outbound', 'sent', res.body.thread_id],
    ]);
    expect(messages[0]!.providerMessageId).toBe(messages[1]!.providerMessageId);
    const thread = (await request(ctx.app).get(`/v1/threads/${res.body.thread_id}`)).body;
    expect(thread.messages.map((entry: { role: string }) => entry.role)).toEqual(['assistant', 'user']);
  });
});

describe('deleting an inbox while it sends', () => {
  it('answers every send 201 (sent, and delivered) or 404 (nothing sent), never 500, and leaves nothing behind', async () => {
    const sender = await createInbox(ctx.app, 'busy-sender');
    const recipient = await createInbox(ctx.app, 'busy-recipient');
    const sends = Array.from({ length: 30 }, (_, i) =>
      request(ctx.app)
        .post('/v1/messages')
        .send({
          inbox_id: sender.id,
          to: [recipient.email_address],
          subject: `Burst ${i}`,
          body: 'x',
          attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: Buffer.from(`file ${i}`).toString('base64') }],
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    const deletion = request(ctx.app).delete(`/v1/inboxes/${sender.id}`);
    const [results, deleted] = await Promise.all([Promise.all(sends), deletion]);

    expect(deleted.status).toBe(204);
    const statuses = results.map((res) => res.status);
    if (!statuses.every((s) => s === 201 || s === 404))
      console.log(results.filter((r) => r.status !== 201 && r.status !== 404).map((r) => [r.status, JSON.stringify(r.body)]));
    expect(statuses.every((status) => status === 201 || status === 404)).toBe(true);
    const sent = results.filter((res) => res.status === 201);
    // What answered 201 reached the recipient; what answered 404 was never sent.
    expect(await ctx.db.message.count({ where: { inboxId: recipient.id } })).toBe(sent.length);
    expect((await request(ctx.app).get(`/v1/inboxes/${sender.id}`)).status).toBe(404);
    expect(await ctx.db.message.count({ where: { inboxId: sender.id } })).toBe(0);
    expect(await ctx.db.pendingObject.count()).toBe(0);
    expect((await storedFiles(ctx.dataDir)).filter((file) => file.includes(sender.id))).toEqual([]);
    expect(await ctx.db.attachment.count({ where: { inboxId: recipient.id } })).toBe(sent.length);
  });

  it('answers 404 to a send that starts after the delete began', async () => {
    const sender = await createInbox(ctx.app, 'leaving');
    await ctx.db.inbox.update({ where: { id: sender.id }, data: { deletedAt: new Date() } });
    const res = await request(ctx.app)
      .post('/v1/messages')
      .send({ inbox_id: sender.id, to: ['someone@example.com'], subject: 's', body: 'b' });
    expect(res.status).toBe(404);
    expect(await ctx.db.message.count({ where: { inboxId: sender.id } })).toBe(0);
  });
});

describe('attachments up to the limit', () => {
  it('takes one of 25 MiB, decoded and checked in linear time, and refuses one byte more with 413', async () => {
    const sender = await createInbox(ctx.app, 'big-files');
    const limit = ctx.deps.config.INBOX_MAX_ATTACHMENT_BYTES;
    expect(limit).toBe(25 * 1024 * 1024);
    const attach = (bytes: number) =>
      request(ctx.app)
        .post('/v1/messages')
        .send({
          inbox_id: sender.id,
          to: ['someone@example.com'],
          subject: 'Large',
          body: 'x',
          attachments: [
            {
              filename: 'large.bin',
              content_type: 'application/octet-stream',
              content: Buffer.alloc(bytes, 1).toString('base64'),
            },
          ],
        });
    const accepted = await attach(limit);
    expect(accepted.status).toBe(201);
    expect(accepted.body.attachments[0].size).toBe(limit);
    const refused = await attach(limit + 1);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: 'payload_too_large',
      details: { limit_bytes: limit, size_bytes: limit + 1 },
    });
  }, 120_000);
});

describe('the reconciler', () => {
  /** Sends a message, then makes it look as if the process had stopped before recording the transport's answer. */
  async function interruptedSend(options: { keepDelivery: boolean; key: string }) {
    const sender = await createInbox(ctx.app, `${options.key}-s`);
    const recipient = await createInbox(ctx.app, `${options.key}-r`);
    const sent = (
      await request(ctx.app)
        .post('/v1/messages')
        .set('Idempotency-Key', options.key)
        .send({ inbox_id: sender.id, to: [recipient.email_address], subject: 'Interrupted', body: 'x' })
        .expect(201)
    ).body;
    await ctx.db.message.update({ where: { id: sent.id }, data: { status: 'sending', leaseUntil: new Date(Date.now() - 1000) } });
    await ctx.db.idempotencyKey.update({
      where: { inboxId_key: { inboxId: sender.id, key: options.key } },
      data: { response: undefined, completedAt: null },
    });
    if (!options.keepDelivery) await ctx.db.message.deleteMany({ where: { inboxId: recipient.id } });
    return { sender, recipient, sent };
  }

  const reconcileNow = () => reconcile({ ...ctx.deps, leaseSeconds: 60 });

  it('marks an interrupted local send sent when its delivery exists, completing its key', async () => {
    const { sender, sent } = await interruptedSend({ keepDelivery: true, key: 'resume-delivered' });
    expect((await reconcileNow()).sends).toBeGreaterThanOrEqual(1);
    expect(await ctx.db.message.findUniqueOrThrow({ where: { id: sent.id } })).toMatchObject({
      status: 'sent',
      leaseUntil: null,
    });
    const key = await ctx.db.idempotencyKey.findUniqueOrThrow({
      where: { inboxId_key: { inboxId: sender.id, key: 'resume-delivered' } },
    });
    expect(key.response).toEqual(sent);
  });

  it('marks it failed when no copy was delivered, visibly, and frees its key', async () => {
    const { sender, sent } = await interruptedSend({ keepDelivery: false, key: 'resume-lost' });
    await reconcileNow();
    const message = (await request(ctx.app).get(`/v1/messages/${sent.id}`)).body;
    expect(message.metadata.delivery).toMatchObject({ status: 'failed', provider: 'local' });
    expect(message.metadata.delivery.reason).toMatch(/stopped before local took the message: it was not sent/);
    expect(await ctx.db.idempotencyKey.count({ where: { inboxId: sender.id } })).toBe(0);
  });

  it('leaves a send under a valid lease alone', async () => {
    const { sent } = await interruptedSend({ keepDelivery: true, key: 'still-sending' });
    await ctx.db.message.update({ where: { id: sent.id }, data: { leaseUntil: new Date(Date.now() + 60_000) } });
    await reconcileNow();
    expect((await ctx.db.message.findUniqueOrThrow({ where: { id: sent.id } })).status).toBe('sending');
  });

  it('asks Mailgun whether it accepted an interrupted send', async () => {
    const mailgun = await startProvider((req) =>
      req.method === 'GET'
        ? { status: 200, body: { items: [{ event: 'accepted' }], paging: {} } }
        : { status: 200, body: { id: '<x@mg>', message: 'Queued' } },
    );
    const viaMailgun = await ctx.replica({
      EMAIL_PROVIDER: 'mailgun',
      MAILGUN_API_KEY: 'key-test',
      MAILGUN_DOMAIN: 'mg.example.com',
      MAILGUN_BASE_URL: mailgun.url,
    });
    try {
      const sender = await createInbox(viaMailgun.app, 'via-mailgun');
      const sent = (
        await request(viaMailgun.app)
          .post('/v1/messages')
          .send({ inbox_id: sender.id, to: ['a@example.com'], subject: 's', body: 'b' })
          .expect(201)
      ).body;
      await ctx.db.message.update({ where: { id: sent.id }, data: { status: 'sending', leaseUntil: new Date(0) } });
      await reconcile({ ...viaMailgun.deps, leaseSeconds: 60 });
      expect((await ctx.db.message.findUniqueOrThrow({ where: { id: sent.id } })).status).toBe('sent');
      expect(mailgun.requests.at(-1)).toMatchObject({
        method: 'GET',
        path: expect.stringContaining('/v3/mg.example.com/events?'),
      });
    } finally {
      await viaMailgun.close();
      await mailgun.close();
    }
  });

  it('removes objects whose record never came, once their journal row expired, and sweeps partial writes', async () => {
    await ctx.deps.storage.put('inboxes/x/attachments/abandoned', Buffer.from('a'), { contentType: 'text/plain' });
    await ctx.deps.storage.put('inboxes/x/attachments/in-flight', Buffer.from('b'), { contentType: 'text/plain' });
    await ctx.db.pendingObject.createMany({
      data: [
        { storageKey: 'inboxes/x/attachments/abandoned', expiresAt: new Date(Date.now() - 1000) },
        { storageKey: 'inboxes/x/attachments/in-flight', expiresAt: new Date(Date.now() + 60_000) },
      ],
    });
    const report = await reconcileNow();
    expect(report.objects).toBe(1);
    expect(await storedFiles(ctx.dataDir)).toEqual(expect.arrayContaining(['inboxes/x/attachments/in-flight']));
    expect(await storedFiles(ctx.dataDir)).not.toContain('inboxes/x/attachments/abandoned');
    expect((await ctx.db.pendingObject.findMany()).map((row) => row.storageKey)).toEqual(['inboxes/x/attachments/in-flight']);
    await ctx.db.pendingObject.deleteMany();
  });

  it('refuses a record whose objects the reconciler has taken for removal (a reconciler stopped midway)', async () => {
    const key = 'inboxes/x/attachments/taken';
    await ctx.db.pendingObject.create({ data: { storageKey: key, expiresAt: new Date(0) } });
    const taken = {
      filename: 'f',
      contentType: 'text/plain',
      size: 1,
      disposition: 'attachment',
      storageBackend: 'local',
      storageKey: key,
      content: null,
      contentHash: 'sha256:x',
    };
    await expect(ctx.db.$transaction((tx) => settlePendingObjects(prismaStatements(tx), [taken]))).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    // The same on pg's own transaction (inbound mail), which takes back what it wrote before.
    const written = 'inboxes/x/attachments/written-before';
    await expect(
      pgTransaction(ctx.db, async (client) => {
        await client.query(`INSERT INTO pending_objects (storage_key, expires_at) VALUES ($1, now() + interval '1 minute')`, [
          written,
        ]);
        await settlePendingObjects(pgStatements(client), [taken]);
      }),
    ).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(await ctx.db.pendingObject.count({ where: { storageKey: written } })).toBe(0);
    expect((await reconcileNow()).objects).toBe(1);
    expect(await ctx.db.pendingObject.count()).toBe(0);
  });

  it('finishes the deletion of an inbox whose delete was interrupted', async () => {
    const inbox = await createInbox(ctx.app, 'half-deleted');
    await request(ctx.app)
      .post('/v1/messages')
      .send({
        inbox_id: inbox.id,
        to: ['a@example.com'],
        subject: 's',
        body: 'b',
        attachments: [{ filename: 'f', content_type: 'text/plain', content: 'eA==' }],
      })
      .expect(201);
    await ctx.db.inbox.update({ where: { id: inbox.id }, data: { deletedAt: new Date(Date.now() - 3600_000) } });
    expect((await reconcileNow()).inboxes).toBe(1);
    expect(await ctx.db.inbox.count({ where: { id: inbox.id } })).toBe(0);
    expect((await storedFiles(ctx.dataDir)).filter((file) => file.includes(inbox.id))).toEqual([]);
  });
});
