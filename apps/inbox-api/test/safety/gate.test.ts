/**
 * The outbound safety gate through the API: kill switches (inbox, organization), allow and block
 * lists in both directions (inbound through a provider webhook and local delivery), and the daily
 * and new-recipient caps. Everything on a real database with the local transport.
 */
import request from 'supertest';
import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { multipartFixture } from '../webhooks/helpers.js';

let ctx: TestContext;
let org: { id: string };
let other: { id: string };
let manager: string;

beforeAll(async () => {
  ctx = await createTestContext({
    INBOX_API_KEYS: OPERATOR_KEY,
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LIMIT_PER_HOUR: '0',
  });
  org = await createOrganization(ctx.app, 'Gate');
  other = await createOrganization(ctx.app, 'Other');
  manager = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send', 'manage'] })).key;
});
afterAll(() => ctx.close());

const op = () => as(ctx.app, OPERATOR_KEY);
const send = (key: string, inboxId: string, to: string[], subject = 'Hello') =>
  as(ctx.app, key).post('/v1/messages', { inbox_id: inboxId, to, subject, body: 'Hi' });
const sentCount = (inboxId: string) => ctx.db.message.count({ where: { inboxId, direction: 'outbound' } });

describe('kill switch', () => {
  it('refuses every send of an inbox with sending_enabled false (403 sending_disabled), and sends again once true', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'killed', organization_id: org.id });
    const patched = await as(ctx.app, manager).patch(`/v1/inboxes/${inbox.id}`, { sending_enabled: false }).expect(200);
    expect(patched.body).toMatchObject({ id: inbox.id, sending_enabled: false });
    expect((await op().get(`/v1/inboxes/${inbox.id}`)).body.sending_enabled).toBe(false);
    const refused = await send(manager, inbox.id, ['x@example.com']);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'sending_disabled', details: { inbox_id: inbox.id } });
    expect(await sentCount(inbox.id)).toBe(0);
    await as(ctx.app, manager).patch(`/v1/inboxes/${inbox.id}`, { sending_enabled: true }).expect(200);
    await send(manager, inbox.id, ['x@example.com']).expect(201);
  });

  it('refuses every send of every inbox of an organization with sending_enabled false', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'org-killed', organization_id: org.id });
    const patched = await as(ctx.app, manager).patch(`/v1/organizations/${org.id}`, { sending_enabled: false }).expect(200);
    expect(patched.body).toMatchObject({ id: org.id, sending_enabled: false, name: 'Gate' });
    try {
      const refused = await send(manager, inbox.id, ['x@example.com']);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'sending_disabled', details: { organization_id: org.id } });
      expect(await sentCount(inbox.id)).toBe(0);
    } finally {
      await as(ctx.app, manager).patch(`/v1/organizations/${org.id}`, { sending_enabled: true }).expect(200);
    }
    await send(manager, inbox.id, ['x@example.com']).expect(201);
  });

  it('needs manage, reaches only its own organization, and refuses bad input', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'switch-input', organization_id: org.id });
    const reader = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send'] })).key;
    const limited = (
      await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, inbox_ids: [inbox.id], permissions: ['read', 'manage'] })
    ).key;
    expect((await as(ctx.app, reader).patch(`/v1/inboxes/${inbox.id}`, { sending_enabled: false })).status).toBe(403);
    expect((await as(ctx.app, reader).patch(`/v1/organizations/${org.id}`, { sending_enabled: false })).status).toBe(403);
    expect((await as(ctx.app, limited).patch(`/v1/organizations/${org.id}`, { sending_enabled: false })).status).toBe(403);
    await as(ctx.app, limited).patch(`/v1/inboxes/${inbox.id}`, { name: 'Renamed' }).expect(200);
    expect((await as(ctx.app, manager).patch(`/v1/organizations/${other.id}`, { sending_enabled: false })).status).toBe(404);
    expect((await as(ctx.app, manager).patch('/v1/organizations/default', { sending_enabled: false })).status).toBe(404);
    const foreign = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'switch-foreign', organization_id: other.id });
    expect((await as(ctx.app, manager).patch(`/v1/inboxes/${foreign.id}`, { sending_enabled: false })).status).toBe(404);
    for (const body of [{ sending_enabled: 'no' }, { sending_enabled: null }, { unknown: true }, { name: 'a\u0000b' }]) {
      const res = await as(ctx.app, manager).patch(`/v1/inboxes/${inbox.id}`, body);
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'validation_error' });
    }
    expect((await op().get(`/v1/inboxes/${foreign.id}`)).body.sending_enabled).toBe(true);
    expect((await op().get(`/v1/organizations/${other.id}`)).body.sending_enabled).toBe(true);
  });
});

describe('lists', () => {
  it('normalises entries, lists them with filters and pages, and removes them', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'lists-crud', organization_id: org.id });
    const created = await as(ctx.app, manager)
      .post('/v1/lists', { inbox_id: inbox.id, direction: 'send', type: 'block', entry: ' Spam@Example.COM ' })
      .expect(201);
    expect(created.body).toMatchObject({
      organization_id: org.id,
      inbox_id: inbox.id,
      direction: 'send',
      type: 'block',
      entry: 'spam@example.com',
    });
    const domain = await as(ctx.app, manager)
      .post('/v1/lists', { organization_id: org.id, direction: 'receive', type: 'allow', entry: '@Partner.com' })
      .expect(201);
    expect(domain.body).toMatchObject({ inbox_id: null, entry: 'partner.com' });
    const dup = await as(ctx.app, manager).post('/v1/lists', {
      inbox_id: inbox.id,
      direction: 'send',
      type: 'block',
      entry: 'SPAM@example.com',
    });
    expect(dup.status).toBe(409);

    const byInbox = (await as(ctx.app, manager).get(`/v1/lists?inbox_id=${inbox.id}`).expect(200)).body;
    expect(byInbox).toMatchObject({ total: 1, count: 1, items: [{ id: created.body.id }] });
    const receiveAllow = (await as(ctx.app, manager).get(`/v1/lists?organization_id=${org.id}&direction=receive&type=allow`))
      .body;
    expect(receiveAllow.items.map((item: { id: string }) => item.id)).toEqual([domain.body.id]);
    const firstPage = (await as(ctx.app, manager).get(`/v1/lists?organization_id=${org.id}&limit=1`)).body;
    expect(firstPage).toMatchObject({ count: 1, total: 2 });

    await as(ctx.app, manager).delete(`/v1/lists/${created.body.id}`).expect(204);
    await as(ctx.app, manager).delete(`/v1/lists/${domain.body.id}`).expect(204);
    expect((await as(ctx.app, manager).delete(`/v1/lists/${created.body.id}`)).status).toBe(404);
    expect((await as(ctx.app, manager).get(`/v1/lists?organization_id=${org.id}`)).body.total).toBe(0);
  });

  it('refuses entries that are no address or domain, and other bad input (400)', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'lists-bad', organization_id: org.id });
    const base = { inbox_id: inbox.id, direction: 'send', type: 'block' };
    const bodies = [
      { ...base, entry: 'not an address' },
      { ...base, entry: 'localhost' },
      { ...base, entry: "x'; DROP TABLE list_entries; --" },
      { ...base, entry: 'a\u0000@example.com' },
      { ...base, entry: `${'a'.repeat(400)}@example.com` },
      { ...base, entry: 42 },
      { ...base, entry: 'a@example.com', direction: 'sideways' },
      { ...base, entry: 'a@example.com', type: 'maybe' },
      { direction: 'send', type: 'block', entry: 'a@example.com' },
      { ...base, organization_id: org.id, entry: 'a@example.com' },
      { ...base, entry: 'a@example.com', extra: 1 },
    ];
    for (const body of bodies) {
      const res = await as(ctx.app, manager).post('/v1/lists', body);
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'validation_error' });
    }
    expect((await as(ctx.app, manager).get('/v1/lists?direction=up')).status).toBe(400);
    expect(await ctx.db.listEntry.count({ where: { inboxId: inbox.id } })).toBe(0);
  });

  it('keeps each scope to its own entries (404 for others), and an inbox key off the organization’s list (403)', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'lists-scope', organization_id: org.id });
    const foreignInbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'lists-foreign', organization_id: other.id });
    const foreign = await op()
      .post('/v1/lists', { inbox_id: foreignInbox.id, direction: 'send', type: 'block', entry: 'x@example.com' })
      .expect(201);
    const limited = (
      await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, inbox_ids: [inbox.id], permissions: ['read', 'manage'] })
    ).key;
    expect((await as(ctx.app, manager).delete(`/v1/lists/${foreign.body.id}`)).status).toBe(404);
    expect((await as(ctx.app, manager).get(`/v1/lists?inbox_id=${foreignInbox.id}`)).status).toBe(404);
    expect((await as(ctx.app, manager).get(`/v1/lists?organization_id=${other.id}`)).status).toBe(404);
    expect(
      (
        await as(ctx.app, manager).post('/v1/lists', {
          inbox_id: foreignInbox.id,
          direction: 'send',
          type: 'block',
          entry: 'a.com',
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await as(ctx.app, limited).post('/v1/lists', {
          organization_id: org.id,
          direction: 'send',
          type: 'block',
          entry: 'a.com',
        })
      ).status,
    ).toBe(403);
    const all = (await as(ctx.app, manager).get('/v1/lists?limit=200')).body.items as { organization_id: string }[];
    expect(all.filter((item) => item.organization_id !== org.id)).toEqual([]);
    await op().delete(`/v1/lists/${foreign.body.id}`).expect(204);
  });

  it('refuses a send to a blocked recipient (403 recipient_blocked naming them) and sends nothing', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'send-block', organization_id: org.id });
    const target = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'send-block-target', organization_id: org.id });
    await as(ctx.app, manager)
      .post('/v1/lists', { inbox_id: inbox.id, direction: 'send', type: 'block', entry: target.email_address })
      .expect(201);
    await as(ctx.app, manager)
      .post('/v1/lists', { inbox_id: inbox.id, direction: 'send', type: 'block', entry: 'spam.test' })
      .expect(201);
    const refused = await send(manager, inbox.id, ['ok@fine.test', target.email_address.toUpperCase(), 'a@sub.spam.test']);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('recipient_blocked');
    expect(refused.body.error.details.addresses).toEqual([target.email_address, 'a@sub.spam.test']);
    expect(await sentCount(inbox.id)).toBe(0);
    expect(await ctx.db.message.count({ where: { inboxId: target.id } })).toBe(0);
    await send(manager, inbox.id, ['ok@fine.test']).expect(201);
  });

  it('lets only allowed recipients through where an allow list exists, at both levels; block wins', async () => {
    const allowOrg = await createOrganization(ctx.app, 'Allow');
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'allow-only', organization_id: allowOrg.id });
    const add = (body: object) =>
      op()
        .post('/v1/lists', { direction: 'send', ...body })
        .expect(201);
    await add({ organization_id: allowOrg.id, type: 'allow', entry: 'partner.test' });
    await send(OPERATOR_KEY, inbox.id, ['a@partner.test']).expect(201);
    expect((await send(OPERATOR_KEY, inbox.id, ['a@stranger.test'])).body.error.details.addresses).toEqual(['a@stranger.test']);
    await add({ inbox_id: inbox.id, type: 'allow', entry: 'boss@partner.test' });
    await send(OPERATOR_KEY, inbox.id, ['boss@partner.test']).expect(201);
    expect((await send(OPERATOR_KEY, inbox.id, ['a@partner.test'])).status).toBe(403);
    await add({ organization_id: allowOrg.id, type: 'block', entry: 'boss@partner.test' });
    expect((await send(OPERATOR_KEY, inbox.id, ['boss@partner.test'])).body.error.code).toBe('recipient_blocked');
    // Receive lists do not govern sends.
    await add({ inbox_id: inbox.id, direction: 'receive', type: 'block', entry: 'partner.test' });
  });

  it('does not store inbound mail from a blocked sender, answers the webhook 2xx and records message.blocked', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'inbound-block', organization_id: org.id });
    const open = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'inbound-open', organization_id: org.id });
    await as(ctx.app, manager)
      .post('/v1/lists', { inbox_id: inbox.id, direction: 'receive', type: 'block', entry: 'Example.com' })
      .expect(201);
    const { body, contentType } = multipartFixture('inbound/sendgrid/python-default_data.txt');
    const text = body
      .toString('latin1')
      .replaceAll('inbound@inbound.example.com', `${inbox.email_address}, ${open.email_address}`);
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .set('content-type', contentType)
      .send(Buffer.from(text, 'latin1'));
    expect(res.status).toBe(200);
    expect(res.body.blocked).toEqual([inbox.id]);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
    expect(await ctx.db.message.count({ where: { inboxId: open.id } })).toBe(1);
    const events = (await as(ctx.app, manager).get(`/v1/events?inbox_id=${inbox.id}&types=message.blocked`)).body.items;
    expect(events).toEqual([
      expect.objectContaining({
        type: 'message.blocked',
        inbox_id: inbox.id,
        message_id: null,
        data: { direction: 'inbound', from: 'test@example.com', subject: 'Testing non-raw' },
      }),
    ]);
  });

  it('applies receive lists to local delivery: an allow list keeps out everyone else', async () => {
    const sender = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'local-sender', organization_id: org.id });
    const guarded = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'local-guarded', organization_id: org.id });
    await as(ctx.app, manager)
      .post('/v1/lists', { inbox_id: guarded.id, direction: 'receive', type: 'allow', entry: 'friend@elsewhere.test' })
      .expect(201);
    await send(manager, sender.id, [guarded.email_address], 'Knock knock').expect(201);
    expect(await ctx.db.message.count({ where: { inboxId: guarded.id } })).toBe(0);
    const event = await ctx.db.event.findFirstOrThrow({ where: { inboxId: guarded.id, type: 'message.blocked' } });
    expect(event.data).toEqual({ direction: 'inbound', from: sender.email_address, subject: 'Knock knock' });
  });
});

describe('caps', () => {
  it('answers 429 past the sends per inbox per day', async () => {
    const limited = await createTestContext({ INBOX_SEND_LIMIT_PER_HOUR: '0', INBOX_SEND_LIMIT_PER_DAY: '2' });
    try {
      const inbox = (await request(limited.app).post('/v1/inboxes').send({ name: 'd', email_username: 'daily' })).body;
      const sendOne = () =>
        request(limited.app)
          .post('/v1/messages')
          .send({ inbox_id: inbox.id, to: ['x@example.com'], subject: 's', body: 'b' });
      await sendOne().expect(201);
      await sendOne().expect(201);
      const res = await sendOne();
      expect(res.status).toBe(429);
      expect(res.body.error).toMatchObject({
        code: 'rate_limited',
        message: 'Too many sends from this inbox: at most 2 per day',
      });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(80_000);
      expect(res.body.error.details.retry_after_seconds).toBe(Number(res.headers['retry-after']));
    } finally {
      await limited.close();
    }
  });

  it('answers 429 past the distinct new recipients per inbox per day; known recipients still pass', async () => {
    const limited = await createTestContext({ INBOX_SEND_LIMIT_PER_HOUR: '0', INBOX_NEW_RECIPIENT_LIMIT_PER_DAY: '3' });
    try {
      const create = (name: string) => request(limited.app).post('/v1/inboxes').send({ name, email_username: name });
      const inbox = (await create('recipients')).body;
      const second = (await create('recipients2')).body;
      const sendTo = (id: string, to: string[]) =>
        request(limited.app).post('/v1/messages').send({ inbox_id: id, to, subject: 's', body: 'b' });
      await sendTo(inbox.id, ['a@x.test', 'B@x.test']).expect(201);
      await sendTo(inbox.id, ['a@x.test', 'b@x.test']).expect(201);
      const over = await sendTo(inbox.id, ['c@x.test', 'd@x.test']);
      expect(over.status).toBe(429);
      expect(over.body.error).toMatchObject({
        code: 'rate_limited',
        details: { limit: 3, new_recipients: ['c@x.test', 'd@x.test'] },
      });
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(80_000);
      await sendTo(inbox.id, ['c@x.test']).expect(201);
      expect((await sendTo(inbox.id, ['e@x.test'])).status).toBe(429);
      await sendTo(inbox.id, ['a@x.test', 'c@x.test']).expect(201);
      // Per inbox: another inbox has its own.
      await sendTo(second.id, ['e@x.test', 'f@x.test', 'g@x.test']).expect(201);
      expect(await limited.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(4);
    } finally {
      await limited.close();
    }
  });

  it('counts new recipients exactly under concurrent sends', async () => {
    const limited = await createTestContext({ INBOX_SEND_LIMIT_PER_HOUR: '0', INBOX_NEW_RECIPIENT_LIMIT_PER_DAY: '5' });
    try {
      const inbox = (await request(limited.app).post('/v1/inboxes').send({ name: 'c', email_username: 'concurrent' })).body;
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          request(limited.app)
            .post('/v1/messages')
            .send({ inbox_id: inbox.id, to: [`r${i}@x.test`], subject: 's', body: 'b' }),
        ),
      );
      expect(results.filter((res) => res.status === 201)).toHaveLength(5);
      expect(results.filter((res) => res.status === 429)).toHaveLength(7);
      expect(await limited.db.inboxContact.count({ where: { inboxId: inbox.id } })).toBe(5);
    } finally {
      await limited.close();
    }
  });
  it('takes nothing from the other caps for a send one cap refuses', async () => {
    const limited = await createTestContext({
      INBOX_API_KEYS: OPERATOR_KEY,
      INBOX_RATE_LIMIT_PER_MINUTE: '0',
      INBOX_SEND_LIMIT_PER_HOUR: '5',
      INBOX_NEW_RECIPIENT_LIMIT_PER_DAY: '2',
    });
    try {
      const org = await createOrganization(limited.app, 'Caps');
      const keyWith = async (limit: number | null) =>
        (
          await createKey(limited.app, OPERATOR_KEY, {
            organization_id: org.id,
            permissions: ['read', 'send'],
            send_limit_per_hour: limit,
          })
        ).key;
      const capped = await keyWith(1);
      const free = await keyWith(0);
      const sendAs = (key: string, inboxId: string, to: string) =>
        as(limited.app, key).post('/v1/messages', { inbox_id: inboxId, to: [to], subject: 's', body: 'b' });
      const statuses = async (sends: (() => Promise<{ status: number }>)[]) => {
        const out = [];
        for (const sendOne of sends) out.push((await sendOne()).status);
        return out;
      };

      // The key's own cap refuses 9 of 10: the inbox's hourly cap counted 1 send, 4 remain.
      const first = await createInbox(limited.app, OPERATOR_KEY, { email_username: 'caps-key', organization_id: org.id });
      const byCapped = await Promise.all(Array.from({ length: 10 }, () => sendAs(capped, first.id, 'x@x.test')));
      expect(byCapped.filter((res) => res.status === 201)).toHaveLength(1);
      expect(await statuses(Array.from({ length: 4 }, () => () => sendAs(free, first.id, 'x@x.test')))).toEqual([
        201, 201, 201, 201,
      ]);
      expect((await sendAs(free, first.id, 'x@x.test')).status).toBe(429);

      // New recipients refused: nothing taken from the inbox's or the key's hourly caps.
      const second = await createInbox(limited.app, OPERATOR_KEY, { email_username: 'caps-new', organization_id: org.id });
      const unknown = await statuses(Array.from({ length: 6 }, (_, i) => () => sendAs(free, second.id, `n${i}@x.test`)));
      expect(unknown).toEqual([201, 201, 429, 429, 429, 429]);
      expect(await statuses(Array.from({ length: 3 }, () => () => sendAs(free, second.id, 'n0@x.test')))).toEqual([
        201, 201, 201,
      ]);
      expect((await sendAs(free, second.id, 'n1@x.test')).status).toBe(429);
      expect(await limited.db.message.count({ where: { inboxId: second.id, direction: 'outbound' } })).toBe(5);
    } finally {
      await limited.close();
    }
  });

  it('counts concurrent retries of one Idempotency-Key as one send', async () => {
    const limited = await createTestContext({ INBOX_SEND_LIMIT_PER_HOUR: '3' });
    try {
      const inbox = (await request(limited.app).post('/v1/inboxes').send({ name: 'i', email_username: 'idem-caps' })).body;
      const sendOne = (subject: string) =>
        request(limited.app)
          .post('/v1/messages')
          .send({ inbox_id: inbox.id, to: ['x@x.test'], subject, body: 'b' });
      const retries = await Promise.all(Array.from({ length: 3 }, () => sendOne('once').set('Idempotency-Key', 'one-send')));
      expect(retries.filter((res) => res.status >= 500)).toEqual([]);
      expect(await limited.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(1);
      // One send counted: two more fit the hour.
      await sendOne('second').expect(201);
      await sendOne('third').expect(201);
      expect((await sendOne('fourth')).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('addresses of received mail', () => {
  /** A raw mail delivered through SendGrid's webhook to `inbox`: the id of the message stored, if any. */
  async function deliver(inbox: { email_address: string }, headers: Record<string, string>) {
    const raw = [
      ...Object.entries({
        To: inbox.email_address,
        Subject: 'Invoice',
        'Message-ID': `<${Math.random()}@sender.test>`,
        ...headers,
      }).map(([name, value]) => `${name}: ${value}`),
      'Content-Type: text/plain; charset=utf-8',
      '',
      'hello',
    ].join('\r\n');
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .field('email', raw)
      .field('envelope', JSON.stringify({ to: [inbox.email_address] }))
      .expect(200);
    return res.body as { messages: { message_id: string }[]; blocked?: string[] };
  }

  it('are matched against the lists whatever their domain’s spelling: a trailing dot passes neither way', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'trailing-dot', organization_id: org.id });
    for (const direction of ['send', 'receive']) {
      await as(ctx.app, manager)
        .post('/v1/lists', { inbox_id: inbox.id, direction, type: 'block', entry: 'evil.test' })
        .expect(201);
    }
    // `evil.test.` is evil.test, fully qualified: the mail from it is not stored...
    expect((await deliver(inbox, { From: 'spam@evil.test.' })).blocked).toEqual([inbox.id]);
    // ...and a reply to a Reply-To there is refused.
    const stored = await deliver(inbox, { From: 'friend@ok.test', 'Reply-To': 'collect@Evil.Test.' });
    const reply = await as(ctx.app, manager).post(`/v1/messages/${stored.messages[0]!.message_id}/reply`, { body: 'Paid' });
    expect({ status: reply.status, code: reply.body.error?.code }).toEqual({ status: 403, code: 'recipient_blocked' });
    expect(await sentCount(inbox.id)).toBe(0);
  });

  it('are checked as the transport will read them: junk around a blocked address does not get a reply past the lists', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'junk-addresses', organization_id: org.id });
    await as(ctx.app, manager).post('/v1/lists', {
      organization_id: org.id,
      direction: 'send',
      type: 'block',
      entry: 'rival.test',
    });
    // Each parses once into an address of no blocked domain (`ceo"@rival.test,`), and again, in the
    // transport, into ceo@rival.test.
    for (const [headers, replyAll] of [
      [{ From: 'friend@ok.test', 'Reply-To': 'Boss <ceo"@rival.test,>' }, false],
      [{ From: 'friend@ok.test', 'Reply-To': 'Boss <"ceo@rival.test(>' }, false],
      [{ From: 'Boss <ceo"@rival.test,>' }, false],
      [{ From: 'friend@ok.test', Cc: 'Boss <ceo"@rival.test,>' }, true],
    ] as const) {
      const stored = await deliver(inbox, headers);
      const reply = await as(ctx.app, manager).post(`/v1/messages/${stored.messages[0]!.message_id}/reply`, {
        body: 'Our prices',
        reply_all: replyAll,
      });
      expect({ headers, status: reply.status, code: reply.body.error?.code, blocked: reply.body.error?.details }).toEqual({
        headers,
        status: 403,
        code: 'recipient_blocked',
        blocked: expect.objectContaining({ addresses: ['ceo@rival.test'] }),
      });
    }
    expect(await sentCount(inbox.id)).toBe(0);
  });

  it('give a reply no more recipients per field than a send may name (400), and nothing is sent', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'crowded', organization_id: org.id });
    const cc = Array.from({ length: 120 }, (_, i) => `guest${i}@example.com`).join(', ');
    const stored = await deliver(inbox, { From: 'host@example.com', Cc: cc });
    const messageId = stored.messages[0]!.message_id;
    const all = await as(ctx.app, manager).post(`/v1/messages/${messageId}/reply`, { body: 'Yes', reply_all: true });
    expect({ status: all.status, details: all.body.error?.details }).toEqual({
      status: 400,
      details: { message_id: messageId, field: 'cc', count: 120, max: 50 },
    });
    expect(await sentCount(inbox.id)).toBe(0);
    // The sender alone is one recipient.
    await as(ctx.app, manager).post(`/v1/messages/${messageId}/reply`, { body: 'Yes' }).expect(201);
  });
});
