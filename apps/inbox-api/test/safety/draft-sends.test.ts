/**
 * A draft's send against a slow or stopping transport: a cancel that comes while the provider
 * has the mail is refused (409) rather than answered `cancelled` for a mail that goes out, and a
 * send interrupted with its outcome unknown (SMTP, SES and SendGrid cannot tell afterwards) is not
 * made a second time by the draft's job. The transport is the real local one, held at its door.
 */
import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import type { MailTransport, OutboundMail } from '../../src/adapters/mail/index.js';
import { resolveInterruptedSends } from '../../src/messages/interrupted-sends.js';

let ctx: TestContext;
let agent: string;
let org: { id: string };

beforeAll(async () => {
  ctx = await createTestContext({
    INBOX_API_KEYS: OPERATOR_KEY,
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LEASE_SECONDS: '2',
  });
  await ctx.deps.jobs.work(ctx.deps);
  org = await createOrganization(ctx.app, 'Draft sends');
  agent = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send'] })).key;
});
afterAll(() => ctx.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The transport's send, held until `release()`; `handed` lists the subjects it was given. */
function holdTransport(options: { confirmsInterrupted: boolean }) {
  const mailer = ctx.deps.mailer as { -readonly [K in keyof MailTransport]: MailTransport[K] };
  const original = { send: mailer.send, resolveInterrupted: mailer.resolveInterrupted };
  const handed: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  if (!options.confirmsInterrupted) mailer.resolveInterrupted = undefined;
  mailer.send = async (mail: OutboundMail) => {
    handed.push(mail.subject);
    if (handed.length === 1) await released;
    return original.send.call(mailer, mail);
  };
  const restore = () => {
    Object.assign(mailer, original);
    release();
  };
  return { handed, release, restore };
}

async function draftOf(subject: string) {
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, {
    email_username: subject.toLowerCase().replace(/\W+/g, '-'),
    organization_id: org.id,
  });
  const draft = (
    await as(ctx.app, agent)
      .post('/v1/drafts', { inbox_id: inbox.id, to: ['partner@example.com'], subject, body: 'x' })
      .expect(201)
  ).body as { id: string };
  return { inbox, draft };
}

const until = async (check: () => boolean, ms = 10_000) => {
  for (const end = Date.now() + ms; !check() && Date.now() < end;) await sleep(50);
};

it('refuses a cancel once the message is recorded (409), and the draft ends sent', async () => {
  const { inbox, draft } = await draftOf('Cancel while sending');
  const transport = holdTransport({ confirmsInterrupted: true });
  try {
    const sending = as(ctx.app, agent)
      .post(`/v1/drafts/${draft.id}/send`)
      .then((res) => res);
    await until(() => transport.handed.length > 0);
    const cancel = await as(ctx.app, agent).delete(`/v1/drafts/${draft.id}`);
    expect({
      status: cancel.status,
      code: cancel.body.error?.code,
      message_id: typeof cancel.body.error?.details?.message_id,
    }).toEqual({
      status: 409,
      code: 'conflict',
      message_id: 'string',
    });
    transport.release();
    expect((await sending).status).toBe(200);
    const final = (await as(ctx.app, agent).get(`/v1/drafts/${draft.id}`).expect(200)).body;
    expect(final).toMatchObject({ status: 'sent', message_id: cancel.body.error.details.message_id });
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(1);
  } finally {
    transport.restore();
  }
});

it('does not send a draft again when its send was interrupted with the outcome unknown, and says so', async () => {
  const { inbox, draft } = await draftOf('Interrupted once');
  const transport = holdTransport({ confirmsInterrupted: false });
  try {
    // The provider has the mail and never answers: as if the process stopped there.
    void as(ctx.app, agent)
      .post(`/v1/drafts/${draft.id}/send`)
      .then(
        () => undefined,
        () => undefined,
      );
    await until(() => transport.handed.length > 0);
    await sleep(2500); // the send lease (2 s) ends
    expect(await resolveInterruptedSends({ ...ctx.deps, leaseSeconds: 2 })).toBe(1);
    // The draft's job looks again within the lease: it ends the draft rather than sending again.
    let final: { status: string; last_error: string | null } = { status: '', last_error: null };
    for (const end = Date.now() + 15_000; final.status !== 'cancelled' && Date.now() < end; await sleep(200)) {
      final = (await as(ctx.app, agent).get(`/v1/drafts/${draft.id}`).expect(200)).body;
    }
    expect(final).toMatchObject({ status: 'cancelled', last_error: expect.stringMatching(/^interrupted: .*not sent again/) });
    expect(transport.handed).toEqual(['Interrupted once']);
    expect(await ctx.db.message.findMany({ where: { inboxId: inbox.id }, select: { status: true } })).toEqual([
      { status: 'failed' },
    ]);
  } finally {
    transport.restore();
  }
});

it('queues the next attempt of a draft whose interrupted send surely did not go, as its job may have died with the process', async () => {
  const { inbox, draft } = await draftOf('Job died with it');
  const recipient = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'job-died-recipient', organization_id: org.id });
  await as(ctx.app, agent)
    .patch(`/v1/drafts/${draft.id}`, { to: [recipient.email_address] })
    .expect(200);
  const mailer = ctx.deps.mailer as { -readonly [K in keyof MailTransport]: MailTransport[K] };
  const send = mailer.send;
  let attempts = 0;
  let stop!: (error: Error) => void;
  const stopped = new Promise<never>((_resolve, reject) => (stop = reject));
  // The first attempt does not come back while the test runs, as if its process stopped there; the
  // local transport then finds no copy delivered: surely not sent.
  mailer.send = (mail: OutboundMail) => (++attempts === 1 ? stopped : send.call(mailer, mail));
  try {
    void as(ctx.app, agent)
      .post(`/v1/drafts/${draft.id}/send`)
      .then(
        () => undefined,
        () => undefined,
      );
    await until(() => attempts > 0);
    // The draft's backstop job died with the process that held it: no job of the draft is left.
    await ctx.db.$executeRaw`DELETE FROM pgboss.job WHERE name = 'send-draft' AND data->>'draft_id' = ${draft.id}`;
    await sleep(2500); // the send lease (2 s) ends
    expect(await resolveInterruptedSends({ ...ctx.deps, leaseSeconds: 2 })).toBe(1);
    let final: { status: string; message_id: string | null } = { status: '', message_id: null };
    for (const end = Date.now() + 15_000; final.status !== 'sent' && Date.now() < end; await sleep(200)) {
      final = (await as(ctx.app, agent).get(`/v1/drafts/${draft.id}`).expect(200)).body;
    }
    expect(final.status).toBe('sent');
    expect(attempts).toBe(2);
    expect(await ctx.db.message.count({ where: { inboxId: recipient.id, direction: 'inbound' } })).toBe(1);
    expect(
      await ctx.db.message.findMany({ where: { inboxId: inbox.id }, select: { status: true }, orderBy: { createdAt: 'asc' } }),
    ).toEqual([{ status: 'failed' }, { status: 'sent' }]);
  } finally {
    mailer.send = send;
    stop(new Error('the process stopped'));
  }
});

describe('who sends a draft: the API key that wrote it', () => {
  const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();
  async function statusOf(draftId: string, wanted: string) {
    let draft: { status: string; last_error: string | null } = { status: '', last_error: null };
    for (const end = Date.now() + 15_000; draft.status !== wanted && Date.now() < end; await sleep(200)) {
      draft = (await as(ctx.app, OPERATOR_KEY).get(`/v1/drafts/${draftId}`).expect(200)).body;
    }
    return draft;
  }

  it("counts against the key's hourly send cap: a capped key's draft waits, scheduled", async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'capped-drafter', organization_id: org.id });
    const capped = (
      await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send'], send_limit_per_hour: 1 })
    ).key;
    const body = { inbox_id: inbox.id, to: ['someone@example.com'], subject: 'Capped', body: 'hi' };
    await as(ctx.app, capped).post('/v1/messages', body).expect(201);
    expect((await as(ctx.app, capped).post('/v1/messages', body)).status).toBe(429);
    const draft = (await as(ctx.app, capped).post('/v1/drafts', body).expect(201)).body;
    const sent = await as(ctx.app, capped).post(`/v1/drafts/${draft.id}/send`).expect(200);
    expect(sent.body.draft).toMatchObject({ status: 'scheduled', last_error: expect.stringMatching(/^rate_limited: /) });
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id, direction: 'outbound' } })).toBe(1);
  });

  it('sends nothing with a key once it is revoked: its scheduled draft is cancelled, saying why', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'revoked-drafter', organization_id: org.id });
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send'] });
    const draft = (
      await as(ctx.app, key.key)
        .post('/v1/drafts', {
          inbox_id: inbox.id,
          to: ['someone@example.com'],
          subject: 'Later',
          body: 'x',
          send_at: inFuture(1500),
        })
        .expect(201)
    ).body;
    await as(ctx.app, OPERATOR_KEY).delete(`/v1/api-keys/${key.id}`).expect(204);
    expect(await statusOf(draft.id, 'cancelled')).toMatchObject({
      status: 'cancelled',
      last_error: expect.stringMatching(/revoked/),
    });
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
  });

  it('holds a draft scheduled before its inbox came under `approval` until someone approves it', async () => {
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'policy-changed', organization_id: org.id });
    const draft = (
      await as(ctx.app, agent)
        .post('/v1/drafts', {
          inbox_id: inbox.id,
          to: ['buyer@example.com'],
          subject: 'Offer',
          body: 'x',
          send_at: inFuture(1500),
        })
        .expect(201)
    ).body;
    expect(draft.status).toBe('scheduled');
    await as(ctx.app, OPERATOR_KEY).patch(`/v1/inboxes/${inbox.id}`, { send_policy: 'approval' }).expect(200);
    expect((await statusOf(draft.id, 'pending_approval')).status).toBe('pending_approval');
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
    await as(ctx.app, OPERATOR_KEY).post(`/v1/drafts/${draft.id}/approve`).expect(200);
    expect((await statusOf(draft.id, 'sent')).status).toBe('sent');
  });
});
