import type { AddressInfo } from 'node:net';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import request from 'supertest';
import { readAttachment } from '../../src/messages/attachments.js';
import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';

let ctx: TestContext;
let agent: { id: string; email_address: string };
let carol: { id: string; email_address: string };
let dave: { id: string; email_address: string };
let operator: ReturnType<typeof as>;

beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY, INBOX_RATE_LIMIT_PER_MINUTE: '0' });
  operator = as(ctx.app, OPERATOR_KEY);
  agent = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'agent' });
  carol = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'carol' });
  dave = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'dave' });
});
afterAll(() => ctx.close());

const send = (body: Record<string, unknown>) =>
  operator.post('/v1/messages', { to: ['someone@example.com'], subject: 'Hello', body: 'Hi', ...body });

/** The copy of a message (by Message-ID) that `inboxId` received. */
async function receivedCopy(inboxId: string, providerMessageId: string) {
  return ctx.db.message.findFirstOrThrow({ where: { inboxId, direction: 'inbound', providerMessageId } });
}

const message = async (id: string) => (await operator.get(`/v1/messages/${id}`).expect(200)).body;

describe('POST /v1/messages with cc, bcc, reply_to and labels', () => {
  it('records them, delivers to every recipient, and shows the bcc to no recipient', async () => {
    const sent = await send({
      inbox_id: agent.id,
      to: [carol.email_address],
      cc: ['cc-person@example.com'],
      bcc: [dave.email_address],
      reply_to: 'tickets@example.com',
      labels: ['Campaign-1', 'crm'],
    }).expect(201);
    const record = await message(sent.body.id);
    expect(record).toMatchObject({
      cc_addresses: ['cc-person@example.com'],
      bcc_addresses: [dave.email_address],
      reply_to_addresses: ['tickets@example.com'],
      labels: ['sent', 'campaign-1', 'crm'],
    });
    const atCarol = await receivedCopy(carol.id, record.provider_message_id);
    const atDave = await receivedCopy(dave.id, record.provider_message_id);
    for (const copy of [atCarol, atDave]) {
      expect(copy.bccAddresses).toEqual([]);
      expect(copy.ccAddresses).toEqual(['cc-person@example.com']);
      expect(copy.replyToAddresses).toEqual(['tickets@example.com']);
      expect(JSON.stringify(copy)).not.toContain('dave@');
      expect(copy.labels).toEqual(['received', 'unread']);
    }
  });

  it('refuses bad recipients and labels with 400', async () => {
    for (const body of [
      { cc: 'not-a-list' },
      { bcc: ['nobody'] },
      { cc: ['a@example.com\r\nBcc: x@example.com'] },
      { reply_to: ['x@example.com', 7] },
      { labels: ['a'.repeat(65)] },
      { labels: ['bad\u0001label'] },
      { labels: ['nul\0'] },
      { labels: ["x'; DROP TABLE messages; --"] },
      { labels: 'crm' },
      { labels: ['received'] },
    ]) {
      const res = await send({ inbox_id: agent.id, ...body });
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: expect.any(String) });
    }
    expect(await ctx.db.message.count({ where: { subject: 'Hello', inboxId: agent.id } })).toBe(1);
  });
});

describe('the safety gate sees every recipient', () => {
  it('refuses a send whose cc or bcc, or a reply-all recipient, is blocked, and sends nothing', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'gated' });
    await operator
      .post('/v1/lists', { inbox_id: inbox.id, direction: 'send', type: 'block', entry: 'blocked.example' })
      .expect(201);
    const before = await ctx.db.message.count({ where: { inboxId: inbox.id } });
    for (const extra of [{ cc: ['x@blocked.example'] }, { bcc: ['y@blocked.example'] }]) {
      const res = await send({ inbox_id: inbox.id, ...extra });
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 403, code: 'recipient_blocked' });
    }
    const incoming = await send({ inbox_id: carol.id, to: [inbox.email_address], cc: ['z@blocked.example'] }).expect(201);
    const copy = await receivedCopy(inbox.id, (await message(incoming.body.id)).provider_message_id);
    await operator.post(`/v1/messages/${copy.id}/reply`, { body: 'Only carol' }).expect(201);
    const all = await operator.post(`/v1/messages/${copy.id}/reply`, { body: 'Everyone', reply_all: true });
    expect(all.status).toBe(403);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(1);
    expect(before).toBe(0);
  });
});

describe('bcc over SMTP', () => {
  let server: SMTPServer;
  let smtp: TestContext;
  const deliveries: { to: string[]; raw: Buffer }[] = [];

  beforeAll(async () => {
    server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          deliveries.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks) });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.server.address() as AddressInfo).port;
    smtp = await ctx.replica({ EMAIL_PROVIDER: 'smtp', SMTP_URL: `smtp://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await smtp.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('puts bcc recipients on the envelope only, never in a header', async () => {
    const sent = await as(smtp.app, OPERATOR_KEY)
      .post('/v1/messages', {
        inbox_id: agent.id,
        to: ['zoe@example.org'],
        cc: ['yann@example.org'],
        bcc: ['secret-auditor@example.net'],
        reply_to: ['replies@example.org'],
        subject: 'Envelope',
        body: 'Hi',
      })
      .expect(201);
    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries;
    expect(delivery!.to.sort()).toEqual(['secret-auditor@example.net', 'yann@example.org', 'zoe@example.org']);
    const raw = delivery!.raw.toString('latin1');
    expect(raw).not.toContain('secret-auditor');
    expect(raw).not.toMatch(/^bcc:/im);
    const email = await PostalMime.parse(delivery!.raw);
    expect(email.cc).toEqual([{ name: '', address: 'yann@example.org' }]);
    expect(email.replyTo).toEqual([{ name: '', address: 'replies@example.org' }]);
    expect((await message(sent.body.id)).bcc_addresses).toEqual(['secret-auditor@example.net']);
  });
});

describe('POST /v1/messages/{message_id}/reply', () => {
  /** Carol writes to the agent (and others): the agent's received copy. */
  async function inbound(body: Record<string, unknown> = {}) {
    const sent = await send({ inbox_id: carol.id, to: [agent.email_address], subject: 'Plan', ...body }).expect(201);
    const providerId = (await message(sent.body.id)).provider_message_id;
    return message((await receivedCopy(agent.id, providerId)).id);
  }

  it('answers the sender in the same thread, with Re:, In-Reply-To and References', async () => {
    const original = await inbound();
    expect(original.labels).toEqual(['received', 'unread']);
    const res = await operator.post(`/v1/messages/${original.id}/reply`, { body: 'On it.', labels: ['handled'] }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      thread_id: original.thread_id,
      inbox_id: agent.id,
      direction: 'OUTBOUND',
      to: [carol.email_address],
      subject: 'Re: Plan',
      content_clean: 'On it.',
      created_at: expect.any(String),
    });
    const reply = await message(res.body.id);
    expect(reply).toMatchObject({
      in_reply_to: original.provider_message_id,
      references: original.provider_message_id,
      labels: ['sent', 'handled'],
      cc_addresses: null,
    });
    // Carol's copy of the reply joins her thread of the original.
    const atCarol = await receivedCopy(carol.id, reply.provider_message_id);
    const carolsSent = await ctx.db.message.findFirstOrThrow({
      where: { inboxId: carol.id, direction: 'outbound', providerMessageId: original.provider_message_id },
    });
    expect(atCarol.threadId).toBe(carolsSent.threadId);
    // Reading never changes labels.
    expect((await message(original.id)).labels).toEqual(['received', 'unread']);
  });

  it('does not double the prefix, and answers an older message of the thread by its own Message-ID', async () => {
    const original = await inbound({ subject: 'RE: Budget' });
    const first = (await operator.post(`/v1/messages/${original.id}/reply`, { body: 'One' }).expect(201)).body;
    expect(first.subject).toBe('RE: Budget');
    const second = (await operator.post(`/v1/messages/${original.id}/reply`, { body: 'Two' }).expect(201)).body;
    expect((await message(second.id)).in_reply_to).toBe(original.provider_message_id);
    const again = (await operator.post(`/v1/messages/${first.id}/reply`, { body: 'Three' }).expect(201)).body;
    expect(again).toMatchObject({ subject: 'RE: Budget', to: [carol.email_address], thread_id: original.thread_id });
    expect((await message(again.id)).references).toBe(
      `${original.provider_message_id} ${(await message(first.id)).provider_message_id}`,
    );
  });

  it('replies to all without its own address and without repeats', async () => {
    const original = await inbound({
      to: [agent.email_address, 'Bob@Example.com'],
      cc: ['bob@example.com', 'AGENT@inbox.test', 'erin@example.com'],
    });
    const res = await operator
      .post(`/v1/messages/${original.id}/reply`, {
        body: 'All',
        reply_all: true,
        cc: ['ERIN@example.com', 'fay@example.com'],
        bcc: ['log@example.com'],
      })
      .expect(201);
    expect(res.body.to).toEqual([carol.email_address, 'Bob@Example.com']);
    const reply = await message(res.body.id);
    expect(reply.cc_addresses).toEqual(['erin@example.com', 'fay@example.com']);
    expect(reply.bcc_addresses).toEqual(['log@example.com']);
  });

  it('answers 404 for a message out of reach, 400 for bad bodies', async () => {
    const original = await inbound();
    const other = await createOrganization(ctx.app, 'Other');
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: other.id, permissions: ['read', 'send'] });
    const stranger = as(ctx.app, key.key);
    const res = await stranger.post(`/v1/messages/${original.id}/reply`, { body: 'Hijack' });
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 404, code: 'not_found' });
    expect((await stranger.post(`/v1/messages/${original.id}/forward`, { to: ['x@example.com'] })).status).toBe(404);
    expect((await stranger.patch(`/v1/messages/${original.id}`, { add_labels: ['x'] })).status).toBe(404);
    await operator.post('/v1/messages/00000000-0000-7000-8000-000000000000/reply', { body: 'x' }).expect(404);
    await operator.post('/v1/messages/not-an-id/reply', { body: 'x' }).expect(404);
    for (const body of [
      {},
      { body: 7 },
      { body: 'x', reply_all: 'yes' },
      { body: 'x', to: ['a@example.com'] },
      { body: 'x', cc: ['bad'] },
    ]) {
      expect((await operator.post(`/v1/messages/${original.id}/reply`, body)).status).toBe(400);
    }
    expect((await message(original.id)).labels).toEqual(['received', 'unread']);
  });
});

describe('POST /v1/messages/{message_id}/forward', () => {
  const file = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256));

  it('carries the attachments under a Fwd: subject, in a thread of its own', async () => {
    const original = (
      await send({
        inbox_id: agent.id,
        subject: 'Report',
        body: 'See attached.',
        attachments: [{ filename: 'report.bin', content_type: 'application/octet-stream', content: file.toString('base64') }],
      }).expect(201)
    ).body;
    const res = await operator
      .post(`/v1/messages/${original.id}/forward`, { to: [dave.email_address], body: 'FYI', bcc: ['archive@example.com'] })
      .expect(201);
    expect(res.body).toMatchObject({
      subject: 'Fwd: Report',
      to: [dave.email_address],
      attachments: [{ filename: 'report.bin', content_type: 'application/octet-stream', size: 300 }],
    });
    expect(res.body.thread_id).not.toBe(original.thread_id);
    const forwarded = await message(res.body.id);
    expect(forwarded.text).toContain('FYI');
    expect(forwarded.text).toContain('Forwarded message');
    expect(forwarded.text).toContain('See attached.');
    expect(forwarded.bcc_addresses).toEqual(['archive@example.com']);
    const atDave = await receivedCopy(dave.id, forwarded.provider_message_id);
    const attachment = await ctx.db.attachment.findFirstOrThrow({ where: { messageId: atDave.id } });
    expect(await readAttachment(ctx.deps.storage, attachment)).toEqual(file);
  });

  it('answers 413 when the attachments are over the limit, and sends nothing', async () => {
    const original = (
      await send({
        inbox_id: agent.id,
        subject: 'Big',
        attachments: [{ filename: 'big.bin', content_type: 'application/octet-stream', content: file.toString('base64') }],
      }).expect(201)
    ).body;
    const small = await ctx.replica({ INBOX_MAX_ATTACHMENT_BYTES: '100' });
    try {
      const before = await ctx.db.message.count();
      const res = await as(small.app, OPERATOR_KEY).post(`/v1/messages/${original.id}/forward`, { to: ['x@example.com'] });
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 413, code: expect.any(String) });
      expect(await ctx.db.message.count()).toBe(before);
    } finally {
      await small.close();
    }
  });

  it('refuses bad bodies with 400', async () => {
    const original = (await send({ inbox_id: agent.id }).expect(201)).body;
    for (const body of [
      {},
      { to: [] },
      { to: 'x@example.com' },
      { to: ['x@example.com'], body: 5 },
      { to: ['x@example.com'], attachments: [] },
    ]) {
      expect((await operator.post(`/v1/messages/${original.id}/forward`, body)).status).toBe(400);
    }
  });
});

describe('PATCH /v1/messages/{message_id}', () => {
  it('adds and removes labels; unread goes when the agent says so', async () => {
    const sent = await send({ inbox_id: carol.id, to: [agent.email_address], subject: 'Labels' }).expect(201);
    const copy = await receivedCopy(agent.id, (await message(sent.body.id)).provider_message_id);
    const res = await operator
      .patch(`/v1/messages/${copy.id}`, { add_labels: ['Todo', 'billing'], remove_labels: ['unread'] })
      .expect(200);
    expect(res.body).toMatchObject({ id: copy.id, labels: ['received', 'todo', 'billing'] });
    const again = await operator.patch(`/v1/messages/${copy.id}`, {
      add_labels: ['todo'],
      remove_labels: ['billing', 'never-there'],
    });
    expect(again.body.labels).toEqual(['received', 'todo']);
    expect((await operator.patch(`/v1/messages/${copy.id}`, {}).expect(200)).body.labels).toEqual(['received', 'todo']);
  });

  it('applies concurrent changes all', async () => {
    const sent = (await send({ inbox_id: agent.id }).expect(201)).body;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => operator.patch(`/v1/messages/${sent.id}`, { add_labels: [`tag-${i}`] }).expect(200)),
    );
    expect((await message(sent.id)).labels).toHaveLength(11);
  });

  it('refuses bad labels with 400 and changes nothing', async () => {
    const sent = (await send({ inbox_id: agent.id }).expect(201)).body;
    for (const body of [
      { add_labels: ['a'.repeat(65)] },
      { add_labels: ['tab\there'] },
      { add_labels: ['nul\0'] },
      { add_labels: [''] },
      { add_labels: ['x'.repeat(100_000)] },
      { add_labels: 'todo' },
      { add_labels: [1] },
      { remove_labels: ['sent'] },
      { add_labels: ['received'] },
      { labels: ['todo'] },
    ]) {
      const res = await operator.patch(`/v1/messages/${sent.id}`, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error.code).toEqual(expect.any(String));
    }
    expect((await message(sent.id)).labels).toEqual(['sent']);
  });

  it('needs the send permission', async () => {
    const sent = (await send({ inbox_id: agent.id }).expect(201)).body;
    const reader = await createKey(ctx.app, OPERATOR_KEY, { organization_id: 'default', permissions: ['read'] });
    expect((await as(ctx.app, reader.key).patch(`/v1/messages/${sent.id}`, { add_labels: ['x'] })).status).toBe(403);
    expect((await request(ctx.app).get(`/v1/messages/${sent.id}`)).status).toBe(401);
  });
});
