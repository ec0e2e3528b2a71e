/**
 * Drafts and approval through the API, on a real database with the local transport and the job
 * queue (pg-boss) running in the test's process.
 */
import { createTestContext, type TestContext, until } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';

jest.setTimeout(60_000);

let ctx: TestContext;
let org: { id: string };
let other: { id: string };
/** read, send, manage: an agent. */
let agent: string;
/** approve (and read): a human's. */
let approver: string;

beforeAll(async () => {
  ctx = await createTestContext({
    INBOX_API_KEYS: OPERATOR_KEY,
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LIMIT_PER_HOUR: '0',
    // Drafts held back by a kill switch are looked at again within this.
    INBOX_SEND_LEASE_SECONDS: '2',
  });
  await ctx.deps.jobs.work(ctx.deps);
  org = await createOrganization(ctx.app, 'Drafts');
  other = await createOrganization(ctx.app, 'Elsewhere');
  agent = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send', 'manage'] })).key;
  approver = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'approve'] })).key;
});
afterAll(() => ctx.close());

const inboxIn = (username: string, organizationId = org.id) =>
  createInbox(ctx.app, OPERATOR_KEY, { email_username: username, organization_id: organizationId });
const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();

const received = (inboxId: string) => ctx.db.message.count({ where: { inboxId, direction: 'inbound' } });

describe('drafts', () => {
  it('are written, read, listed, changed, sent once and then final', async () => {
    const inbox = await inboxIn('drafter');
    const target = await inboxIn('drafter-target');
    const created = await as(ctx.app, agent)
      .post('/v1/drafts', {
        inbox_id: inbox.id,
        to: [target.email_address],
        subject: 'First try',
        body: 'Hello **there**',
        attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('abc').toString('base64') }],
      })
      .expect(201);
    expect(created.body).toMatchObject({
      inbox_id: inbox.id,
      status: 'draft',
      to: [target.email_address],
      cc: [],
      bcc: [],
      subject: 'First try',
      attachments: [{ filename: 'a.txt', content_type: 'text/plain', size: 3 }],
      send_at: null,
      message_id: null,
    });
    const id = created.body.id as string;
    expect(await received(target.id)).toBe(0);
    const patched = await as(ctx.app, agent).patch(`/v1/drafts/${id}`, { subject: 'Second try' }).expect(200);
    expect(patched.body).toMatchObject({ subject: 'Second try', body: 'Hello **there**', status: 'draft' });
    expect((await as(ctx.app, agent).get(`/v1/drafts/${id}`).expect(200)).body.subject).toBe('Second try');
    const listed = (await as(ctx.app, agent).get(`/v1/drafts?inbox_id=${inbox.id}&status=draft`).expect(200)).body;
    expect(listed).toMatchObject({ total: 1, items: [{ id }] });

    const sent = await as(ctx.app, agent).post(`/v1/drafts/${id}/send`).expect(200);
    expect(sent.body.draft).toMatchObject({ id, status: 'sent', last_error: null });
    const message = await ctx.db.message.findUniqueOrThrow({ where: { id: sent.body.draft.message_id } });
    expect(message).toMatchObject({ subject: 'Second try', status: 'sent', inboxId: inbox.id });
    expect(await received(target.id)).toBe(1);

    expect((await as(ctx.app, agent).post(`/v1/drafts/${id}/send`)).status).toBe(409);
    expect((await as(ctx.app, agent).patch(`/v1/drafts/${id}`, { subject: 'Third' })).status).toBe(409);
    expect((await as(ctx.app, agent).delete(`/v1/drafts/${id}`)).status).toBe(409);
    expect(await received(target.id)).toBe(1);
    const types = (
      await ctx.db.event.findMany({ where: { inboxId: inbox.id, type: { startsWith: 'draft.' } }, orderBy: { id: 'asc' } })
    ).map((event) => event.type);
    expect(types).toEqual(['draft.created', 'draft.scheduled', 'draft.sent']);
  });

  it('cancels with DELETE, and a cancelled draft is never sent', async () => {
    const inbox = await inboxIn('canceller');
    const draft = (
      await as(ctx.app, agent)
        .post('/v1/drafts', { inbox_id: inbox.id, to: ['x@example.com'], subject: 's', body: 'b', send_at: inFuture(1500) })
        .expect(201)
    ).body;
    expect(draft.status).toBe('scheduled');
    const cancelled = await as(ctx.app, agent).delete(`/v1/drafts/${draft.id}`).expect(200);
    expect(cancelled.body.status).toBe('cancelled');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await as(ctx.app, agent).get(`/v1/drafts/${draft.id}`)).body.status).toBe('cancelled');
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
  });

  it('pages by page_token, newest first, and refuses a token of another list (400)', async () => {
    const inbox = await inboxIn('paged-drafts');
    for (let i = 0; i < 3; i++) {
      await as(ctx.app, agent)
        .post('/v1/drafts', { inbox_id: inbox.id, to: ['x@example.com'], subject: `d${i}`, body: 'b' })
        .expect(201);
    }
    const first = (await as(ctx.app, agent).get(`/v1/drafts?inbox_id=${inbox.id}&limit=2`).expect(200)).body;
    expect(first.items.map((draft: { subject: string }) => draft.subject)).toEqual(['d2', 'd1']);
    const token = encodeURIComponent(first.next_page_token);
    const second = (await as(ctx.app, agent).get(`/v1/drafts?inbox_id=${inbox.id}&limit=2&page_token=${token}`).expect(200)).body;
    expect({ subjects: second.items.map((draft: { subject: string }) => draft.subject), next: second.next_page_token }).toEqual({
      subjects: ['d0'],
      next: null,
    });
    const inboxesToken = (await as(ctx.app, OPERATOR_KEY).get('/v1/inboxes?limit=1').expect(200)).body.next_page_token;
    await as(ctx.app, agent)
      .get(`/v1/drafts?page_token=${encodeURIComponent(inboxesToken)}`)
      .expect(400);
  });

  it('sends a scheduled draft at send_at through the job queue, once', async () => {
    const inbox = await inboxIn('scheduler');
    const target = await inboxIn('scheduler-target');
    const sendAt = inFuture(1500);
    const draft = (
      await as(ctx.app, agent)
        .post('/v1/drafts', { inbox_id: inbox.id, to: [target.email_address], subject: 'Later', body: 'b', send_at: sendAt })
        .expect(201)
    ).body;
    expect(draft).toMatchObject({ status: 'scheduled', send_at: sendAt });
    expect(await received(target.id)).toBe(0);
    const done = await until(
      async () => (await as(ctx.app, agent).get(`/v1/drafts/${draft.id}`)).body,
      (body) => body.status === 'sent',
    );
    expect(done.status).toBe('sent');
    expect(new Date(done.sent_at).getTime()).toBeGreaterThanOrEqual(new Date(sendAt).getTime());
    expect(await received(target.id)).toBe(1);
  });

  it('answers a send of a draft scheduled for later with the draft as it is: nothing scheduled twice, nothing sent early', async () => {
    const inbox = await inboxIn('later-again');
    const sendAt = inFuture(3_600_000);
    const draft = (
      await as(ctx.app, agent)
        .post('/v1/drafts', { inbox_id: inbox.id, to: ['x@example.com'], subject: 'Later', body: 'b', send_at: sendAt })
        .expect(201)
    ).body;
    for (let i = 0; i < 3; i++) {
      const again = await as(ctx.app, agent).post(`/v1/drafts/${draft.id}/send`).expect(200);
      expect(again.body.draft).toMatchObject({ id: draft.id, status: 'scheduled', send_at: sendAt, message_id: null });
    }
    const events = await ctx.db.event.findMany({ where: { inboxId: inbox.id, type: { startsWith: 'draft.' } } });
    expect(events.map((event) => event.type).sort()).toEqual(['draft.created', 'draft.scheduled']);
    const jobs = await ctx.db.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM pgboss.job WHERE name = 'send-draft' AND data->>'draft_id' = ${draft.id}`;
    expect(Number(jobs[0]!.n)).toBe(1);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
  });

  it('keeps a scheduled draft waiting while the kill switch is off, and sends it once it is on', async () => {
    const inbox = await inboxIn('switched');
    const target = await inboxIn('switched-target');
    await as(ctx.app, agent).patch(`/v1/inboxes/${inbox.id}`, { sending_enabled: false }).expect(200);
    const draft = (
      await as(ctx.app, agent)
        .post('/v1/drafts', {
          inbox_id: inbox.id,
          to: [target.email_address],
          subject: 'Wait',
          body: 'b',
          send_at: inFuture(1000),
        })
        .expect(201)
    ).body;
    const waiting = await until(
      async () => (await as(ctx.app, agent).get(`/v1/drafts/${draft.id}`)).body,
      (body) => body.last_error !== null,
    );
    expect(waiting).toMatchObject({ status: 'scheduled', last_error: expect.stringContaining('sending_disabled') });
    expect(await received(target.id)).toBe(0);
    await as(ctx.app, agent).patch(`/v1/inboxes/${inbox.id}`, { sending_enabled: true }).expect(200);
    const sent = await until(
      async () => (await as(ctx.app, agent).get(`/v1/drafts/${draft.id}`)).body,
      (body) => body.status === 'sent',
    );
    expect(sent.status).toBe('sent');
    expect(await received(target.id)).toBe(1);
  });

  it('refuses send_at in the past or over a year ahead, and other bad input (400)', async () => {
    const inbox = await inboxIn('bad-drafts');
    const base = { inbox_id: inbox.id, to: ['x@example.com'], subject: 's', body: 'b' };
    const bodies = [
      { ...base, send_at: new Date(Date.now() - 60_000).toISOString() },
      { ...base, send_at: new Date(Date.now() + 400 * 24 * 3600 * 1000).toISOString() },
      { ...base, send_at: 'tomorrow' },
      { ...base, send_at: 12 },
      { ...base, to: 'x@example.com' },
      { ...base, to: ['not an address'] },
      { ...base, subject: 'a\r\nBcc: evil@example.com' },
      { ...base, body: 5 },
      { ...base, surprise: true },
      { ...base, body: 'x\u0000y' },
      { inbox_id: inbox.id },
    ];
    for (const body of bodies) {
      const res = await as(ctx.app, agent).post('/v1/drafts', body);
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'validation_error' });
    }
    const draft = (await as(ctx.app, agent).post('/v1/drafts', base).expect(201)).body;
    expect(
      (await as(ctx.app, agent).patch(`/v1/drafts/${draft.id}`, { send_at: new Date(Date.now() - 1000).toISOString() })).status,
    ).toBe(400);
    expect((await as(ctx.app, agent).patch(`/v1/drafts/${draft.id}`, { inbox_id: inbox.id })).status).toBe(400);
    expect((await as(ctx.app, agent).get('/v1/drafts?status=lost')).status).toBe(400);
    const sqlish = await as(ctx.app, agent)
      .post('/v1/drafts', { ...base, subject: "'; DROP TABLE drafts; --" })
      .expect(201);
    expect(sqlish.body.subject).toBe("'; DROP TABLE drafts; --");
    const huge = await as(ctx.app, agent).post('/v1/drafts', {
      ...base,
      attachments: [{ filename: 'big.bin', content_type: 'application/octet-stream', content: 'A'.repeat(36 * 1024 * 1024) }],
    });
    expect(huge.status).toBe(413);
  });

  it('are read by a key with `send` or `approve` alone, and refused (403) to a key with neither', async () => {
    const inbox = await inboxIn('permission-drafter');
    const key = (permissions: string[]) =>
      createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions }).then((created) => as(ctx.app, created.key));
    const [sender, reviewer, manager] = await Promise.all([key(['send']), key(['approve']), key(['manage'])]);
    const draft = (
      await sender.post('/v1/drafts', { inbox_id: inbox.id, to: ['x@example.com'], subject: 'Mine', body: 'b' }).expect(201)
    ).body;
    for (const client of [sender, reviewer]) {
      expect((await client.get(`/v1/drafts/${draft.id}`).expect(200)).body.subject).toBe('Mine');
      const listed = (await client.get(`/v1/drafts?inbox_id=${inbox.id}`).expect(200)).body.items as { id: string }[];
      expect(listed.map((item) => item.id)).toEqual([draft.id]);
    }
    for (const path of [`/v1/drafts/${draft.id}`, '/v1/drafts']) {
      const refused = await manager.get(path);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: 'forbidden',
        message: 'This API key lacks the `read`, `send` or `approve` permission',
      });
    }
  });

  it('answers 404 for drafts and inboxes of other scopes', async () => {
    const foreignInbox = await inboxIn('foreign-drafter', other.id);
    const foreign = (
      await as(ctx.app, OPERATOR_KEY)
        .post('/v1/drafts', { inbox_id: foreignInbox.id, to: ['x@example.com'], subject: 's', body: 'b' })
        .expect(201)
    ).body;
    const key = as(ctx.app, agent);
    expect((await key.get(`/v1/drafts/${foreign.id}`)).status).toBe(404);
    expect((await key.patch(`/v1/drafts/${foreign.id}`, { subject: 'x' })).status).toBe(404);
    expect((await key.delete(`/v1/drafts/${foreign.id}`)).status).toBe(404);
    expect((await key.post(`/v1/drafts/${foreign.id}/send`)).status).toBe(404);
    expect((await as(ctx.app, approver).post(`/v1/drafts/${foreign.id}/approve`)).status).toBe(404);
    expect((await key.get(`/v1/drafts?inbox_id=${foreignInbox.id}`)).status).toBe(404);
    expect(
      (await key.post('/v1/drafts', { inbox_id: foreignInbox.id, to: ['x@example.com'], subject: 's', body: 'b' })).status,
    ).toBe(404);
    expect((await key.get('/v1/drafts/not-a-uuid')).status).toBe(404);
    const all = (await key.get('/v1/drafts?limit=200')).body.items as { inbox_id: string }[];
    expect(all.some((item) => item.inbox_id === foreignInbox.id)).toBe(false);
    expect((await as(ctx.app, OPERATOR_KEY).get(`/v1/drafts/${foreign.id}`)).body.status).toBe('draft');
  });
});

describe('approval', () => {
  async function approvalInbox(username: string) {
    const inbox = await inboxIn(username);
    const patched = await as(ctx.app, agent).patch(`/v1/inboxes/${inbox.id}`, { send_policy: 'approval' }).expect(200);
    expect(patched.body.send_policy).toBe('approval');
    return inbox;
  }

  it('holds every send as a draft pending approval (202), and sends it once approved', async () => {
    const inbox = await approvalInbox('guarded');
    const target = await inboxIn('guarded-target');
    const held = await as(ctx.app, agent)
      .post('/v1/messages', { inbox_id: inbox.id, to: [target.email_address], subject: 'Please approve', body: 'b' })
      .expect(202);
    expect(held.body.draft).toMatchObject({ status: 'pending_approval', subject: 'Please approve', inbox_id: inbox.id });
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);

    // The agent's own key cannot approve.
    const own = await as(ctx.app, agent).post(`/v1/drafts/${held.body.draft.id}/approve`);
    expect({ status: own.status, code: own.body.error.code }).toEqual({ status: 403, code: 'forbidden' });

    const approved = await as(ctx.app, approver).post(`/v1/drafts/${held.body.draft.id}/approve`).expect(200);
    expect(approved.body).toMatchObject({ status: 'sent', approved_by: expect.any(String), approved_at: expect.any(String) });
    expect(await received(target.id)).toBe(1);
    const again = await as(ctx.app, approver).post(`/v1/drafts/${held.body.draft.id}/approve`);
    expect({ status: again.status, code: again.body.error.code }).toEqual({ status: 409, code: 'conflict' });
    expect(await received(target.id)).toBe(1);
    const types = (
      await ctx.db.event.findMany({ where: { inboxId: inbox.id, type: { startsWith: 'draft.' } }, orderBy: { id: 'asc' } })
    ).map((event) => event.type);
    expect(types).toEqual(['draft.created', 'draft.pending_approval', 'draft.approved', 'draft.sent']);
  });

  it('holds a draft send too (202), and a rejected draft is never sent nor approved', async () => {
    const inbox = await approvalInbox('rejecting');
    const draft = (
      await as(ctx.app, agent)
        .post('/v1/drafts', { inbox_id: inbox.id, to: ['x@example.com'], subject: 's', body: 'b' })
        .expect(201)
    ).body;
    const held = await as(ctx.app, agent).post(`/v1/drafts/${draft.id}/send`).expect(202);
    expect(held.body.draft.status).toBe('pending_approval');
    for (const body of [{ reason: '' }, { reason: 'a\u0000b' }, { reason: 5 }, { reason: 'x', extra: 1 }]) {
      expect((await as(ctx.app, approver).post(`/v1/drafts/${draft.id}/reject`, body)).status).toBe(400);
    }
    const rejected = await as(ctx.app, approver).post(`/v1/drafts/${draft.id}/reject`, { reason: 'Too pushy' }).expect(200);
    expect(rejected.body).toMatchObject({ status: 'rejected', rejection_reason: 'Too pushy' });
    expect((await as(ctx.app, approver).post(`/v1/drafts/${draft.id}/approve`)).status).toBe(409);
    expect((await as(ctx.app, approver).post(`/v1/drafts/${draft.id}/reject`, { reason: 'again' })).status).toBe(409);
    expect((await as(ctx.app, agent).post(`/v1/drafts/${draft.id}/send`)).status).toBe(409);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
    // The reason may be left out, with an empty body or none at all.
    for (const body of [{}, undefined]) {
      const another = (
        await as(ctx.app, agent)
          .post('/v1/drafts', { inbox_id: inbox.id, to: ['x@example.com'], subject: 's', body: 'b' })
          .expect(201)
      ).body;
      await as(ctx.app, agent).post(`/v1/drafts/${another.id}/send`).expect(202);
      const res = await as(ctx.app, approver).post(`/v1/drafts/${another.id}/reject`, body).expect(200);
      expect(res.body).toMatchObject({ status: 'rejected', rejection_reason: null });
    }
  });

  it('holds a reply and a forward too (202), and sends each as such once approved', async () => {
    const inbox = await approvalInbox('held-replier');
    const peer = await inboxIn('held-peer');
    const third = await inboxIn('held-forward-target');
    const question = await as(ctx.app, agent)
      .post('/v1/messages', {
        inbox_id: peer.id,
        to: [inbox.email_address],
        subject: 'Question',
        body: 'Can you help?',
        attachments: [{ filename: 'q.txt', content_type: 'text/plain', content: Buffer.from('q').toString('base64') }],
      })
      .expect(201);
    const inbound = await ctx.db.message.findFirstOrThrow({ where: { inboxId: inbox.id, direction: 'inbound' } });

    const reply = await as(ctx.app, agent).post(`/v1/messages/${inbound.id}/reply`, { body: 'Yes.' }).expect(202);
    expect(reply.body.draft).toMatchObject({ status: 'pending_approval', to: [peer.email_address], subject: 'Re: Question' });
    const forward = await as(ctx.app, agent)
      .post(`/v1/messages/${inbound.id}/forward`, { to: [third.email_address], body: 'FYI' })
      .expect(202);
    expect(forward.body.draft).toMatchObject({ status: 'pending_approval', to: [third.email_address], subject: 'Fwd: Question' });
    // The reviewer sees the file that approving the forward sends along.
    expect(forward.body.draft.attachments).toEqual([{ filename: 'q.txt', content_type: 'text/plain', size: 1 }]);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(0);

    for (const held of [reply, forward]) {
      await as(ctx.app, approver).post(`/v1/drafts/${held.body.draft.id}/approve`).expect(200);
    }
    // The reply answers the question, in its thread on both sides.
    const sentReply = await ctx.db.message.findFirstOrThrow({ where: { inboxId: inbox.id, subject: 'Re: Question' } });
    expect(sentReply).toMatchObject({ direction: 'outbound', threadId: inbound.threadId, inReplyTo: inbound.providerMessageId });
    const answered = await ctx.db.message.findFirstOrThrow({ where: { inboxId: peer.id, direction: 'inbound' } });
    expect(answered).toMatchObject({ subject: 'Re: Question', threadId: question.body.thread_id });
    // The forward carries the attachment, in a thread of its own.
    const forwarded = await ctx.db.message.findFirstOrThrow({
      where: { inboxId: third.id, direction: 'inbound' },
      include: { attachments: true },
    });
    expect(forwarded.subject).toBe('Fwd: Question');
    expect(forwarded.attachments.map((file) => file.filename)).toEqual(['q.txt']);
    const sentForward = await ctx.db.message.findFirstOrThrow({ where: { inboxId: inbox.id, subject: 'Fwd: Question' } });
    expect(sentForward.threadId).not.toBe(inbound.threadId);
  });

  it('answers a retry of a held send with its draft once approved and sent, even after the policy is lifted', async () => {
    const inbox = await approvalInbox('held-then-lifted');
    const body = { inbox_id: inbox.id, to: ['c@fine.test'], subject: 'Once', body: 'only once' };
    const held = await as(ctx.app, agent).post('/v1/messages', body).set('Idempotency-Key', 'retry-me').expect(202);
    await as(ctx.app, approver).post(`/v1/drafts/${held.body.draft.id}/approve`).expect(200);
    await as(ctx.app, OPERATOR_KEY).patch(`/v1/inboxes/${inbox.id}`, { send_policy: 'direct' }).expect(200);
    const retry = await as(ctx.app, agent).post('/v1/messages', body).set('Idempotency-Key', 'retry-me').expect(202);
    expect(retry.body.draft).toMatchObject({ id: held.body.draft.id, status: 'sent', message_id: expect.any(String) });
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(1);
  });

  it('sends exactly once under 20 concurrent approvals', async () => {
    const inbox = await approvalInbox('racing');
    const target = await inboxIn('racing-target');
    const held = await as(ctx.app, agent)
      .post('/v1/messages', { inbox_id: inbox.id, to: [target.email_address], subject: 'Race', body: 'b' })
      .expect(202);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => as(ctx.app, approver).post(`/v1/drafts/${held.body.draft.id}/approve`)),
    );
    expect(results.map((res) => res.status).sort()).toEqual([200, ...Array.from({ length: 19 }, () => 409)]);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(1);
    expect(await received(target.id)).toBe(1);
  });

  it('keeps the kill switch and block lists before approval, and a retried held send makes one draft', async () => {
    const inbox = await approvalInbox('guarded-more');
    await as(ctx.app, agent)
      .post('/v1/lists', { inbox_id: inbox.id, direction: 'send', type: 'block', entry: 'blocked.test' })
      .expect(201);
    const blocked = await as(ctx.app, agent).post('/v1/messages', {
      inbox_id: inbox.id,
      to: ['a@blocked.test'],
      subject: 's',
      body: 'b',
    });
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.code).toBe('recipient_blocked');
    const send = () =>
      as(ctx.app, agent)
        .post('/v1/messages', { inbox_id: inbox.id, to: ['a@fine.test'], subject: 'Once', body: 'b' })
        .set('Idempotency-Key', 'held-once');
    const first = await send().expect(202);
    const retry = await send().expect(202);
    expect(retry.body.draft.id).toBe(first.body.draft.id);
    // The key with another request: 409, as for a send that was not held.
    const other = await as(ctx.app, agent)
      .post('/v1/messages', { inbox_id: inbox.id, to: ['b@fine.test'], subject: 'Other', body: 'b' })
      .set('Idempotency-Key', 'held-once');
    expect({ status: other.status, code: other.body.error?.code }).toEqual({ status: 409, code: 'conflict' });
    await as(ctx.app, agent).patch(`/v1/inboxes/${inbox.id}`, { sending_enabled: false }).expect(200);
    const disabled = await as(ctx.app, agent).post('/v1/messages', {
      inbox_id: inbox.id,
      to: ['a@fine.test'],
      subject: 's',
      body: 'b',
    });
    expect(disabled.body.error.code).toBe('sending_disabled');
    expect(await ctx.db.draft.count({ where: { inboxId: inbox.id } })).toBe(1);
  });

  it('refuses a draft written with send_at to a blocked recipient (403) and keeps nothing of it', async () => {
    const inbox = await inboxIn('refused-at-creation');
    await as(ctx.app, agent)
      .post('/v1/lists', { inbox_id: inbox.id, direction: 'send', type: 'block', entry: 'blocked.test' })
      .expect(201);
    const refused = await as(ctx.app, agent).post('/v1/drafts', {
      inbox_id: inbox.id,
      to: ['x@blocked.test'],
      subject: 'Later',
      body: 'b',
      send_at: inFuture(3_600_000),
    });
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 403, code: 'recipient_blocked' });
    expect(await ctx.db.draft.count({ where: { inboxId: inbox.id } })).toBe(0);
    expect(await ctx.db.event.count({ where: { inboxId: inbox.id } })).toBe(0);
  });

  it('refuses a bad send_policy (400)', async () => {
    const inbox = await inboxIn('bad-policy');
    for (const body of [{ send_policy: 'sometimes' }, { send_policy: null }, { send_policy: 1 }]) {
      expect((await as(ctx.app, agent).patch(`/v1/inboxes/${inbox.id}`, body)).status).toBe(400);
    }
  });
});

describe('drafts held by a kill switch, with the default send lease (their next attempt a minute away)', () => {
  let fresh: TestContext;
  beforeAll(async () => {
    fresh = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY });
    await fresh.deps.jobs.work(fresh.deps);
  });
  afterAll(() => fresh.close());

  it.each(['inbox', 'organization'] as const)('go as soon as the %s’s switch is on again, once each', async (level) => {
    const organization = await createOrganization(fresh.app, `Switch ${level}`);
    const inbox = await createInbox(fresh.app, OPERATOR_KEY, {
      email_username: `held-${level}`,
      organization_id: organization.id,
    });
    const target = await createInbox(fresh.app, OPERATOR_KEY, { email_username: `held-${level}-to` });
    const switchPath = level === 'inbox' ? `/v1/inboxes/${inbox.id}` : `/v1/organizations/${organization.id}`;
    await as(fresh.app, OPERATOR_KEY).patch(switchPath, { sending_enabled: false }).expect(200);
    const drafts = await Promise.all(
      [1, 2].map(
        async (n) =>
          (
            await as(fresh.app, OPERATOR_KEY)
              .post('/v1/drafts', {
                inbox_id: inbox.id,
                to: [target.email_address],
                subject: `Held ${n}`,
                body: 'b',
                send_at: inFuture(500),
              })
              .expect(201)
          ).body as { id: string },
      ),
    );
    const read = (id: string) => async () => (await as(fresh.app, OPERATOR_KEY).get(`/v1/drafts/${id}`)).body;
    for (const draft of drafts) {
      expect(await until(read(draft.id), (body) => body.last_error !== null, 10_000)).toMatchObject({
        status: 'scheduled',
        last_error: expect.stringContaining('sending_disabled'),
      });
    }
    const enabled = Date.now();
    await as(fresh.app, OPERATOR_KEY).patch(switchPath, { sending_enabled: true }).expect(200);
    for (const draft of drafts) {
      expect(await until(read(draft.id), (body) => body.status === 'sent', 10_000)).toMatchObject({ status: 'sent' });
    }
    // Well before their next attempt, a minute after the refusal.
    expect(Date.now() - enabled).toBeLessThan(10_000);
    expect(await fresh.db.message.count({ where: { inboxId: target.id, direction: 'inbound' } })).toBe(2);
  });
});
