/**
 * Webhooks out: the CRUD routes and their validation and scope, then deliveries for real to a
 * receiver on 127.0.0.1 (signatures checked with the `standardwebhooks` reference verifier), and
 * the receivers that fail: 500, a hang, a redirect, a closed connection; retries with the same
 * webhook-id, the manual retry, and a webhook disabled once a delivery spent the (short) schedule.
 */
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { attemptDelivery, createWebhookClient, describeFailure, stateAfterAttempt } from '../../src/webhooks-out/deliver.js';
import { DEFAULT_RETRY_SCHEDULE } from '../../src/webhooks-out/settings.js';
import { newSecret, signature, signingKey, SigningKeys } from '../../src/webhooks-out/sign.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { createTestContext, type TestContext } from '../context.js';
import type { Receiver } from './receiver.js';
import { deliveriesWhen as deliveriesWhenOf, type DeliveryView, startWebhookTestbed, type WebhookTestbed } from './testbed.js';

jest.setTimeout(60_000);

let ctx: TestContext;
let receiver: Receiver;
let testbed: WebhookTestbed;
let orgA: { id: string };
let orgB: { id: string };
let inboxA: { id: string; email_address: string };
let inboxA2: { id: string; email_address: string };
let inboxB: { id: string; email_address: string };
let keyA: string;
let keyA1: string;
let keyB: string;
let readerA: string;

beforeAll(async () => {
  testbed = await startWebhookTestbed(
    { INBOX_WEBHOOK_RETRY_SCHEDULE: '1,1', INBOX_WEBHOOK_TIMEOUT_SECONDS: '2' },
    { sweepSeconds: 1, jobs: true },
  );
  ({ ctx, receiver } = testbed);
  orgA = await createOrganization(ctx.app, 'Hooks A');
  orgB = await createOrganization(ctx.app, 'Hooks B');
  inboxA = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'hook-a', organization_id: orgA.id });
  inboxA2 = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'hook-a2', organization_id: orgA.id });
  inboxB = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'hook-b', organization_id: orgB.id });
  keyA = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, permissions: ['read', 'send', 'manage'] })).key;
  keyA1 = (
    await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, inbox_ids: [inboxA.id], permissions: ['read', 'manage'] })
  ).key;
  keyB = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgB.id, permissions: ['read', 'send', 'manage'] })).key;
  readerA = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, permissions: ['read'] })).key;
});
afterAll(() => testbed?.close());

interface CreatedWebhook {
  id: string;
  url: string;
  secret: string;
  event_types: string[];
  inbox_ids: string[] | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
}

async function createWebhook(key: string, body: object): Promise<CreatedWebhook> {
  const res = await as(ctx.app, key).post('/v1/webhooks', body);
  if (res.status !== 201) throw new Error(`POST /v1/webhooks answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as CreatedWebhook;
}

/** Sends from `from` to `to` with the local transport: `message.sent` in one inbox, `message.received` in the other. */
async function mail(key: string, from: { id: string }, to: { email_address: string }, subject: string) {
  return (
    await as(ctx.app, key)
      .post('/v1/messages', { inbox_id: from.id, to: [to.email_address], subject, body: 'Hello' })
      .expect(201)
  ).body as { id: string; thread_id: string };
}

async function deliveries(key: string, webhookId: string): Promise<DeliveryView[]> {
  return (await as(ctx.app, key).get(`/v1/webhooks/${webhookId}/deliveries`).expect(200)).body.items;
}

const deliveriesWhen = (webhookId: string, done: (items: DeliveryView[]) => boolean) => deliveriesWhenOf(ctx, webhookId, done);

describe('signatures (pure)', () => {
  it('are what the standardwebhooks reference verifier accepts, and nothing else', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'message.received', data: { subject: 'Hé ✓' } });
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature(signingKey(secret), 'msg_1', timestamp, body),
    };
    expect(new StandardWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    // A kept key signs alike, and each secret keeps its own.
    const keys = new SigningKeys();
    const other = newSecret();
    expect(signature(keys.of(secret), 'msg_1', timestamp, body)).toBe(headers['webhook-signature']);
    expect(keys.of(secret)).toBe(keys.of(secret));
    expect(signature(keys.of(other), 'msg_1', timestamp, body)).not.toBe(headers['webhook-signature']);
    expect(signature(keys.of(secret), 'msg_1', timestamp, body)).toBe(headers['webhook-signature']);
    expect(() => new StandardWebhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new StandardWebhook(newSecret()).verify(body, headers)).toThrow();
  });

  it('retry schedule: delivered, retried after the next delay, then failed and exhausted; a final attempt (manual, or its event gone) is not retried', () => {
    const schedule = [5, 30];
    expect(stateAfterAttempt(schedule, { attempts: 1, final: false, ok: true })).toEqual({
      status: 'delivered',
      retryInSeconds: null,
      exhausted: false,
    });
    expect(stateAfterAttempt(schedule, { attempts: 1, final: false, ok: false })).toEqual({
      status: 'pending',
      retryInSeconds: 5,
      exhausted: false,
    });
    expect(stateAfterAttempt(schedule, { attempts: 2, final: false, ok: false })).toEqual({
      status: 'pending',
      retryInSeconds: 30,
      exhausted: false,
    });
    expect(stateAfterAttempt(schedule, { attempts: 3, final: false, ok: false })).toEqual({
      status: 'failed',
      retryInSeconds: null,
      exhausted: true,
    });
    expect(stateAfterAttempt(schedule, { attempts: 1, final: true, ok: false })).toEqual({
      status: 'failed',
      retryInSeconds: null,
      exhausted: false,
    });
  });

  it('the default schedule retries first within 30 s and for at least a day', () => {
    expect(DEFAULT_RETRY_SCHEDULE[0]).toBeLessThanOrEqual(30);
    expect(DEFAULT_RETRY_SCHEDULE.reduce((sum, seconds) => sum + seconds, 0)).toBeGreaterThanOrEqual(86_400);
  });

  it('names failures without the receiver’s words', () => {
    expect(describeFailure(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), 15)).toBe('Connection refused');
    expect(describeFailure(new DOMException('t', 'TimeoutError'), 15)).toBe('No answer within 15 s');
    expect(describeFailure(new Error('?'), 15)).toBe('The request failed');
  });
});

describe('POST /v1/webhooks and the other routes', () => {
  it('creates, shows the secret once, lists, reads, changes and deletes', async () => {
    const created = await createWebhook(keyA, {
      url: receiver.url('/ok/crud'),
      event_types: ['message.received', 'message.received'],
    });
    expect(created).toEqual({
      id: expect.any(String),
      url: receiver.url('/ok/crud'),
      event_types: ['message.received'],
      inbox_ids: null,
      enabled: true,
      disabled_reason: null,
      organization_id: orgA.id,
      secret: expect.stringMatching(/^whsec_/),
      created_at: expect.any(String),
    });
    const shown = (await as(ctx.app, keyA).get(`/v1/webhooks/${created.id}`).expect(200)).body;
    expect(shown).not.toHaveProperty('secret');
    const list = (await as(ctx.app, keyA).get('/v1/webhooks?limit=200').expect(200)).body;
    expect(list.items.map((item: { id: string }) => item.id)).toContain(created.id);
    expect(list.count).toBe(list.items.length);
    expect(list.items[0]).not.toHaveProperty('secret');

    const changed = (
      await as(ctx.app, keyA)
        .patch(`/v1/webhooks/${created.id}`, { event_types: ['message.sent'], inbox_ids: [inboxA.id], enabled: false })
        .expect(200)
    ).body;
    expect(changed).toMatchObject({ event_types: ['message.sent'], inbox_ids: [inboxA.id], enabled: false });
    const back = (await as(ctx.app, keyA).patch(`/v1/webhooks/${created.id}`, { inbox_ids: null, enabled: true }).expect(200))
      .body;
    expect(back).toMatchObject({ inbox_ids: null, enabled: true, disabled_reason: null });

    await as(ctx.app, keyA).delete(`/v1/webhooks/${created.id}`).expect(204);
    await as(ctx.app, keyA).get(`/v1/webhooks/${created.id}`).expect(404);
    await as(ctx.app, keyA).delete(`/v1/webhooks/${created.id}`).expect(404);
  });

  it.each<[string, object]>([
    ['no url', { event_types: ['message.received'] }],
    ['no event types', { url: 'https://hooks.example.com/x' }],
    ['an empty list of event types', { url: 'https://hooks.example.com/x', event_types: [] }],
    ['an unknown event type', { url: 'https://hooks.example.com/x', event_types: ['message.exploded'] }],
    ['event types as a string', { url: 'https://hooks.example.com/x', event_types: 'message.received' }],
    ['a url that is a number', { url: 42, event_types: ['message.received'] }],
    ['an ftp url', { url: 'ftp://hooks.example.com/x', event_types: ['message.received'] }],
    ['no url at all', { url: 'not a url', event_types: ['message.received'] }],
    ['a NUL byte', { url: 'https://hooks.example.com/x\u0000y', event_types: ['message.received'] }],
    ['a password in the url', { url: 'https://user:pw@hooks.example.com/x', event_types: ['message.received'] }],
    ['a huge url', { url: `https://hooks.example.com/${'a'.repeat(5000)}`, event_types: ['message.received'] }],
    ['an unknown field', { url: 'https://hooks.example.com/x', event_types: ['message.received'], secret: 'mine' }],
    ['an empty inbox list', { url: 'https://hooks.example.com/x', event_types: ['message.received'], inbox_ids: [] }],
    ['a metadata address', { url: 'http://169.254.169.254/latest', event_types: ['message.received'] }],
    ['a metadata host name', { url: 'http://metadata.google.internal/x', event_types: ['message.received'] }],
  ])('refuses %s with 400', async (_case, body) => {
    const res = await as(ctx.app, keyA).post('/v1/webhooks', body).expect(400);
    expect(res.body.error.code).toBe('validation_error');
  });

  it('stores SQL in the URL as text', async () => {
    const url = "https://hooks.example.com/x?q=');DROP TABLE webhooks;--";
    const created = await createWebhook(keyA, { url, event_types: ['message.received'] });
    expect((await as(ctx.app, keyA).get(`/v1/webhooks/${created.id}`).expect(200)).body.url).toBe(url);
    await as(ctx.app, keyA).delete(`/v1/webhooks/${created.id}`).expect(204);
  });

  it('puts an operator’s webhook limited to inboxes in their organization when none is named', async () => {
    const created = await createWebhook(OPERATOR_KEY, {
      url: receiver.url('/ok/operator'),
      event_types: ['message.received'],
      inbox_ids: [inboxA.id],
    });
    expect(created).toMatchObject({ organization_id: orgA.id, inbox_ids: [inboxA.id] });
    await as(ctx.app, keyA).get(`/v1/webhooks/${created.id}`).expect(200);
    await as(ctx.app, OPERATOR_KEY).delete(`/v1/webhooks/${created.id}`).expect(204);
  });

  it('refuses a PATCH with nothing to change, or a bad field', async () => {
    const created = await createWebhook(keyA, { url: receiver.url('/ok/patch'), event_types: ['message.received'] });
    await as(ctx.app, keyA).patch(`/v1/webhooks/${created.id}`, {}).expect(400);
    await as(ctx.app, keyA).patch(`/v1/webhooks/${created.id}`, { enabled: 'yes' }).expect(400);
    await as(ctx.app, keyA).patch(`/v1/webhooks/${created.id}`, { url: 'http://[::ffff:169.254.169.254]/' }).expect(400);
    await as(ctx.app, keyA).delete(`/v1/webhooks/${created.id}`).expect(204);
  });

  it('keeps to the scope: other organizations’ webhooks are not found, inboxes of others are refused, `manage` is needed (and `read` to create or change)', async () => {
    const webhookB = await createWebhook(keyB, { url: receiver.url('/ok/b'), event_types: ['message.received'] });
    for (const path of [`/v1/webhooks/${webhookB.id}`, `/v1/webhooks/${webhookB.id}/deliveries`]) {
      await as(ctx.app, keyA).get(path).expect(404);
    }
    await as(ctx.app, keyA).patch(`/v1/webhooks/${webhookB.id}`, { enabled: false }).expect(404);
    await as(ctx.app, keyA).delete(`/v1/webhooks/${webhookB.id}`).expect(404);
    await as(ctx.app, keyA).post(`/v1/webhooks/${webhookB.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`).expect(404);
    await as(ctx.app, keyA).get('/v1/webhooks/not-a-uuid').expect(404);
    const listA = (await as(ctx.app, keyA).get('/v1/webhooks?limit=200').expect(200)).body;
    expect(listA.items.map((item: { id: string }) => item.id)).not.toContain(webhookB.id);
    // Another organization's inbox, as if it did not exist.
    await as(ctx.app, keyA)
      .post('/v1/webhooks', { url: receiver.url('/ok/x'), event_types: ['message.received'], inbox_ids: [inboxB.id] })
      .expect(404);
    await as(ctx.app, readerA).get('/v1/webhooks').expect(403);
    await as(ctx.app, readerA)
      .post('/v1/webhooks', { url: receiver.url('/ok/x'), event_types: ['message.received'] })
      .expect(403);

    // `manage` without `read` may list and delete webhooks, but not point the messages anywhere.
    const managerA = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, permissions: ['manage'] })).key;
    const refused = await as(ctx.app, managerA)
      .post('/v1/webhooks', { url: receiver.url('/ok/x'), event_types: ['message.received'] })
      .expect(403);
    expect(refused.body.error.message).toBe('This API key lacks the `read` permission');
    const existing = await createWebhook(keyA, { url: receiver.url('/ok/existing'), event_types: ['message.received'] });
    await as(ctx.app, managerA)
      .patch(`/v1/webhooks/${existing.id}`, { url: receiver.url('/ok/elsewhere') })
      .expect(403);
    await as(ctx.app, managerA).get('/v1/webhooks').expect(200);
    await as(ctx.app, managerA).delete(`/v1/webhooks/${existing.id}`).expect(204);

    // A key limited to inbox A1: only webhooks limited to it, and it must limit its own.
    await as(ctx.app, keyA1)
      .post('/v1/webhooks', { url: receiver.url('/ok/x'), event_types: ['message.received'] })
      .expect(403);
    await as(ctx.app, keyA1)
      .post('/v1/webhooks', { url: receiver.url('/ok/x'), event_types: ['message.received'], inbox_ids: [inboxA2.id] })
      .expect(404);
    const limited = await createWebhook(keyA1, {
      url: receiver.url('/ok/a1'),
      event_types: ['message.received'],
      inbox_ids: [inboxA.id],
    });
    const wide = await createWebhook(keyA, { url: receiver.url('/ok/wide'), event_types: ['message.received'] });
    await as(ctx.app, keyA1).get(`/v1/webhooks/${wide.id}`).expect(404);
    const listA1 = (await as(ctx.app, keyA1).get('/v1/webhooks').expect(200)).body;
    expect(listA1.items.map((item: { id: string }) => item.id)).toEqual([limited.id]);
    await as(ctx.app, keyA1).patch(`/v1/webhooks/${limited.id}`, { inbox_ids: null }).expect(403);
    for (const id of [limited.id, wide.id]) await as(ctx.app, keyA).delete(`/v1/webhooks/${id}`).expect(204);
    await as(ctx.app, keyB).delete(`/v1/webhooks/${webhookB.id}`).expect(204);
  });

  it('refuses loopback and private URLs unless INBOX_WEBHOOK_ALLOW_PRIVATE is set', async () => {
    const strict = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY });
    try {
      for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://10.1.2.3/x', 'http://[::1]/x']) {
        const res = await as(strict.app, OPERATOR_KEY)
          .post('/v1/webhooks', { url, event_types: ['message.received'] })
          .expect(400);
        expect(res.body.error.message).toMatch(/INBOX_WEBHOOK_ALLOW_PRIVATE=true/);
      }
    } finally {
      await strict.close();
    }
  });

  it('refuses at delivery a host name that resolves to a loopback address (checked at each connection)', async () => {
    const client = createWebhookClient({
      allowPrivate: false,
      timeoutSeconds: 2,
      resolve: () => Promise.resolve([{ address: '127.0.0.1' }]),
    });
    try {
      const before = receiver.received.length;
      const event = await ctx.db.event.findFirst();
      const outcome = await attemptDelivery(
        client,
        { id: 'w', url: `http://receiver.example:${receiver.port}/ok/rebound`, secret: newSecret() },
        'd',
        event ?? {
          id: 1n,
          type: 'message.received',
          organizationId: orgA.id,
          inboxId: inboxA.id,
          threadId: null,
          messageId: null,
          data: {},
          createdAt: new Date(),
        },
      );
      expect(outcome).toMatchObject({ ok: false, statusCode: null });
      expect(outcome.error).toMatch(/resolves to a loopback address/);
      expect(receiver.received.length).toBe(before);
    } finally {
      await client.close();
    }
  });
});

describe('deliveries', () => {
  it('delivers each matching event once, signed as Standard Webhooks says, with its filters', async () => {
    const all = await createWebhook(keyA, { url: receiver.url('/ok/all'), event_types: ['message.received', 'message.sent'] });
    const received = await createWebhook(keyA, {
      url: receiver.url('/ok/received-a'),
      event_types: ['message.received'],
      inbox_ids: [inboxA.id],
    });
    const other = await createWebhook(keyB, { url: receiver.url('/ok/other-org'), event_types: ['message.received'] });
    const sent = await mail(keyA, inboxA2, inboxA, 'Pushed to the agent');

    const [request] = await receiver.waitFor('/ok/received-a');
    const event = new StandardWebhook(received.secret).verify(request!.body, request!.headers as Record<string, string>) as {
      type: string;
      inbox_id: string;
      data: { subject: string };
    };
    expect(event).toMatchObject({ type: 'message.received', inbox_id: inboxA.id, data: { subject: 'Pushed to the agent' } });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(() => new StandardWebhook(all.secret).verify(request!.body, request!.headers as Record<string, string>)).toThrow();

    const toAll = await receiver.waitFor('/ok/all', 2);
    expect(toAll.map((r) => (JSON.parse(r.body) as { type: string }).type).sort()).toEqual(['message.received', 'message.sent']);
    for (const r of toAll) new StandardWebhook(all.secret).verify(r.body, r.headers as Record<string, string>);

    const list = await deliveriesWhen(received.id, (items) => items.every((item) => item.status === 'delivered'));
    expect(list).toEqual([
      expect.objectContaining({
        event_type: 'message.received',
        status: 'delivered',
        attempts: 1,
        last_status_code: 204,
        next_attempt_at: null,
      }),
    ]);
    expect(list[0]!.id).toBe(request!.headers['webhook-id']);
    // Not one more: each event once per webhook; B's webhook saw nothing of A.
    await mail(keyA, inboxA, inboxA2, `After ${sent.id}`);
    await receiver.waitFor('/ok/all', 4);
    expect(receiver.received.filter((r) => r.path === '/ok/received-a')).toHaveLength(1);
    expect(receiver.received.filter((r) => r.path === '/ok/other-org')).toHaveLength(0);
    for (const id of [all.id, received.id]) await as(ctx.app, keyA).delete(`/v1/webhooks/${id}`).expect(204);
    await as(ctx.app, keyB).delete(`/v1/webhooks/${other.id}`).expect(204);
  });

  it.each<[string, string, RegExp, number | null]>([
    ['answers 500', '/fail/x', /^HTTP 500$/, 500],
    ['hangs', '/hang/x', /^No answer within 2 s$/, null],
    ['redirects', '/redirect/x', /^Redirect \(HTTP 302\) not followed$/, 302],
    ['closes the connection', '/close/x', /^The connection was closed before an answer$/, null],
  ])(
    'a receiver that %s: retried with the same webhook-id, then failed, and the webhook disabled',
    async (_case, path, error, code) => {
      const webhook = await createWebhook(keyB, { url: receiver.url(path), event_types: ['message.received'] });
      const before = receiver.received.filter((r) => r.path === path).length;
      await mail(keyB, inboxB, inboxB, `To ${path}`);
      // Schedule 1,1: three attempts in all.
      const [delivery] = await deliveriesWhen(webhook.id, (items) => items[0]?.status === 'failed');
      expect(delivery).toMatchObject({ attempts: 3, last_status_code: code, next_attempt_at: null });
      expect(delivery!.last_error).toMatch(error);
      expect(delivery!.attempt_log).toHaveLength(3);
      const attempts = receiver.received.filter((r) => r.path === path).slice(before);
      expect(attempts).toHaveLength(3);
      expect(new Set(attempts.map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery!.id]));
      for (const r of attempts) new StandardWebhook(webhook.secret).verify(r.body, r.headers as Record<string, string>);
      if (path.startsWith('/redirect')) expect(receiver.received.filter((r) => r.path === '/ok/redirected')).toHaveLength(0);

      const disabled = (await as(ctx.app, keyB).get(`/v1/webhooks/${webhook.id}`).expect(200)).body;
      expect(disabled.enabled).toBe(false);
      expect(disabled.disabled_reason).toContain(`Delivery ${delivery!.id} failed 3 times`);
      // Disabled: later events are not delivered to it.
      await mail(keyB, inboxB, inboxB, `Again to ${path}`);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await deliveries(keyB, webhook.id)).toHaveLength(1);
      await as(ctx.app, keyB).delete(`/v1/webhooks/${webhook.id}`).expect(204);
    },
  );

  it('retries a delivery by hand: once, with the same webhook-id, also after it failed', async () => {
    receiver.flaky.failing = true;
    const webhook = await createWebhook(keyB, { url: receiver.url('/flaky/x'), event_types: ['message.received'] });
    await mail(keyB, inboxB, inboxB, 'Flaky');
    const [failed] = await deliveriesWhen(webhook.id, (items) => items[0]?.status === 'failed');
    expect(failed!.last_status_code).toBe(503);
    receiver.flaky.failing = false;
    await as(ctx.app, keyA).post(`/v1/webhooks/${webhook.id}/deliveries/${failed!.id}/retry`).expect(404);
    await as(ctx.app, keyB).post(`/v1/webhooks/${webhook.id}/deliveries/not-a-uuid/retry`).expect(404);
    const queued = (await as(ctx.app, keyB).post(`/v1/webhooks/${webhook.id}/deliveries/${failed!.id}/retry`).expect(202)).body;
    expect(queued).toMatchObject({ id: failed!.id, status: 'pending' });
    const [delivered] = await deliveriesWhen(webhook.id, (items) => items[0]?.status === 'delivered');
    expect(delivered).toMatchObject({ attempts: 4, last_status_code: 200 });
    const attempts = receiver.received.filter((r) => r.path === '/flaky/x');
    expect(attempts).toHaveLength(4);
    expect(new Set(attempts.map((r) => r.headers['webhook-id']))).toEqual(new Set([failed!.id]));
    await as(ctx.app, keyB).delete(`/v1/webhooks/${webhook.id}`).expect(204);
  });

  it('shows a key limited to some inboxes only their deliveries, even after the webhook was narrowed to them', async () => {
    const webhook = await createWebhook(keyA, { url: receiver.url('/ok/narrowed'), event_types: ['message.received'] });
    await mail(keyA, inboxA, inboxA2, 'For A2 only');
    const [ofA2] = await deliveriesWhen(webhook.id, (items) => items[0]?.status === 'delivered');
    // Narrowed to inbox A: the key limited to A now reaches the webhook, and may point it at its own receiver.
    await as(ctx.app, keyA)
      .patch(`/v1/webhooks/${webhook.id}`, { inbox_ids: [inboxA.id] })
      .expect(200);
    await as(ctx.app, keyA1)
      .patch(`/v1/webhooks/${webhook.id}`, { url: receiver.url('/ok/limited') })
      .expect(200);
    expect(await deliveries(keyA1, webhook.id)).toEqual([]);
    await as(ctx.app, keyA1).post(`/v1/webhooks/${webhook.id}/deliveries/${ofA2!.id}/retry`).expect(404);
    // The organization's key still sees (and may retry) it.
    expect((await deliveries(keyA, webhook.id)).map((item) => item.id)).toEqual([ofA2!.id]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.received.filter((r) => r.path === '/ok/limited')).toEqual([]);
    await as(ctx.app, keyA).delete(`/v1/webhooks/${webhook.id}`).expect(204);
  });
});
