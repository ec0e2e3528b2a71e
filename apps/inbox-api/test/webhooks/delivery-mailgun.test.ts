import { createHmac, randomBytes } from 'node:crypto';
import request from 'supertest';
import { mailgunDeliveryEvents, mailgunStatus } from '../../src/webhooks/providers/mailgun-events.js';
import { fixture } from './helpers.js';
import { deliverySetup } from './delivery-helpers.js';

jest.setTimeout(60_000);

const SIGNING_KEY = 'key-signing-delivery-0123456789';
const DOMAIN = 'mg.example.com';
/** The id the Mailgun stand-in answers the next sends with (the documented examples' message ids), else ours. */
const nextIds: string[] = [];
let setup: Awaited<ReturnType<typeof deliverySetup>>;

beforeAll(async () => {
  setup = await deliverySetup(
    (req) => {
      const ours = /Message-ID: (<[^>]+>)/i.exec(req.body.toString('latin1'))?.[1];
      const id = nextIds.shift();
      return { status: 200, body: { id: id ? `<${id}>` : ours, message: 'Queued. Thank you.' } };
    },
    (url) => ({
      EMAIL_PROVIDER: 'mailgun',
      MAILGUN_API_KEY: 'key-api',
      MAILGUN_DOMAIN: DOMAIN,
      MAILGUN_BASE_URL: url,
      MAILGUN_WEBHOOK_SIGNING_KEY: SIGNING_KEY,
    }),
  );
});
afterAll(() => setup.close());

/** A documented Mailgun event (test/fixtures/delivery/mailgun), its event-data. */
const documented = (name: string) =>
  JSON.parse(fixture(`delivery/mailgun/${name}`).toString('utf8')) as Record<string, unknown> & {
    message: { headers: Record<string, string> };
  };

function signature(key = SIGNING_KEY, at = new Date()) {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const token = randomBytes(25).toString('hex');
  return {
    timestamp,
    token,
    signature: createHmac('sha256', key)
      .update(timestamp + token)
      .digest('hex'),
  };
}

/** The event as Mailgun posts it: JSON, signed. */
const post = (eventData: unknown, sig: object = signature()) =>
  request(setup.ctx.app)
    .post('/webhooks/mailgun/events')
    .set('content-type', 'application/json')
    .send(JSON.stringify({ signature: sig, 'event-data': eventData }));

/** Sends from org a (or b); Mailgun answers with the documented example's message id. */
async function sendAs(org: 'a' | 'b', mailgunId: string) {
  nextIds.push(mailgunId);
  const id = await setup.send(setup[org]);
  expect((await setup.ctx.db.message.findUniqueOrThrow({ where: { id } })).transportMessageId).toBe(mailgunId);
  return id;
}

const freshId = () => `${Date.now()}.${randomBytes(8).toString('hex')}@${DOMAIN}`;

describe('POST /webhooks/mailgun/events', () => {
  it('records delivered, then a permanent failure as bounced, each with its event, in its organization only', async () => {
    const delivered = documented('delivered.json');
    const mailgunId = delivered.message.headers['message-id']!;
    const id = await sendAs('a', mailgunId);
    const other = await sendAs('b', freshId());

    const res = await post(delivered);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 1, updated: 1 } });
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'delivered',
      delivery_detail: {
        provider: 'mailgun',
        event: 'delivered',
        recipient: 'recipient@sample.mailgun.com',
        reason: '250: OK',
        timestamp: new Date(1770146431658.5283).toISOString(),
      },
    });

    const failed = documented('failed-permanent.json');
    failed.message.headers['message-id'] = mailgunId;
    expect((await post(failed)).body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'bounced',
      delivery_detail: {
        event: 'failed',
        recipient: 'badrecipient@sample.mailgun.com',
        reason: expect.stringMatching(/^permanent\/bounce: 550: 5\.5\.0 Requested action not taken/),
      },
    });
    const events = await setup.deliveryEvents(setup.a, id);
    expect(events.map((event) => event.type)).toEqual(['message.delivered', 'message.bounced']);
    expect(events[1]).toMatchObject({ organization_id: setup.a.organization.id, data: { id, delivery_status: 'bounced' } });

    expect((await setup.message(setup.b, other)).delivery_status).toBe('sent');
    expect(await setup.deliveryEvents(setup.b)).toEqual([]);
  });

  it('takes odd descriptive fields (a code as text, a null recipient or reason) without refusing the event', async () => {
    const failed = documented('failed-permanent.json');
    const id = await sendAs('a', freshId());
    failed.message.headers['message-id'] = (await setup.ctx.db.message.findUniqueOrThrow({ where: { id } })).transportMessageId!;
    const odd = {
      ...failed,
      recipient: null,
      reason: 123,
      timestamp: '1770146431.5',
      'delivery-status': { ...(failed['delivery-status'] as object), code: '550', message: null, description: { text: 'x' } },
    };
    expect((await post(odd)).body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'bounced',
      delivery_detail: { recipient: null, reason: '550', timestamp: new Date(1770146431500).toISOString() },
    });
  });

  it('records a complaint', async () => {
    const complained = documented('complained.json');
    const id = await sendAs('a', complained.message.headers['message-id']!);
    expect((await post(complained)).body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'complained',
      delivery_detail: { event: 'complained', recipient: 'recipient@sample.mailgun.com', reason: null },
    });
    expect((await setup.deliveryEvents(setup.a, id)).map((event) => event.type)).toEqual(['message.complained']);
  });

  it('changes nothing on a temporary failure (Mailgun retries) or on other events', async () => {
    const temporary = documented('failed-temporary.json');
    const id = await sendAs('a', temporary.message.headers['message-id']!);
    expect((await post(temporary)).body).toEqual({ events: 0, matched: 0, updated: 0 });
    expect((await post({ ...temporary, event: 'opened' })).body).toEqual({ events: 0, matched: 0, updated: 0 });
    expect((await setup.message(setup.a, id)).delivery_status).toBe('sent');
    expect(await setup.deliveryEvents(setup.a, id)).toEqual([]);
  });

  it('changes nothing for a message of an inbox being deleted (gone for the API), and appends no event', async () => {
    const mailgunId = freshId();
    const id = await sendAs('b', mailgunId);
    // As deleteInbox leaves it once marked, while it waits for sends (or after a crash there).
    await setup.ctx.db.inbox.update({ where: { id: setup.b.inbox.id }, data: { deletedAt: new Date() } });
    try {
      const res = await post({ ...documented('complained.json'), message: { headers: { 'message-id': mailgunId } } });
      expect(res.body).toEqual({ events: 1, matched: 0, updated: 0 });
      expect(await setup.ctx.db.event.count({ where: { messageId: id, type: 'message.complained' } })).toBe(0);
    } finally {
      await setup.ctx.db.inbox.update({ where: { id: setup.b.inbox.id }, data: { deletedAt: null } });
    }
  });

  it('answers an event of mail it did not send 200, changing nothing', async () => {
    const before = await setup.ctx.db.event.count();
    const res = await post({ ...documented('delivered.json'), message: { headers: { 'message-id': freshId() } } });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 0, updated: 0 } });
    expect(await setup.ctx.db.event.count()).toBe(before);
  });

  it('refuses a replayed token, a forged or stale signature (401), changing nothing', async () => {
    const mailgunId = freshId();
    const id = await sendAs('a', mailgunId);
    const delivered = { ...documented('delivered.json'), message: { headers: { 'message-id': mailgunId } } };
    const sig = signature();
    expect((await post(delivered, sig)).status).toBe(200);
    const replay = await post({ ...delivered, event: 'complained' }, sig);
    expect(replay.status).toBe(401);
    expect(replay.body.error.message).toMatch(/replay/);

    expect((await post({ ...delivered, event: 'complained' }, signature('another-key'))).status).toBe(401);
    expect(
      (await post({ ...delivered, event: 'complained' }, signature(SIGNING_KEY, new Date(Date.now() - 3600_000)))).status,
    ).toBe(401);
    expect((await post({ ...delivered, event: 'complained' }, { timestamp: '1', token: 'x' })).status).toBe(401);
    const unsigned = await request(setup.ctx.app)
      .post('/webhooks/mailgun/events')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ 'event-data': { ...delivered, event: 'complained' } }));
    expect(unsigned.status).toBe(401);
    expect((await setup.message(setup.a, id)).delivery_status).toBe('delivered');
  });

  it('takes one request of a token when several race with it, each with another body', async () => {
    // Mailgun signs the token, not the body: copies of a signature sent at once must not all apply theirs.
    const mailgunId = freshId();
    const id = await sendAs('a', mailgunId);
    const delivered = { ...documented('delivered.json'), message: { headers: { 'message-id': mailgunId } } };
    const sig = signature();
    const answers = await Promise.all([
      post(delivered, sig),
      ...Array.from({ length: 9 }, () => post({ ...delivered, event: 'complained' }, sig)),
    ]);
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([200, ...Array.from({ length: 9 }, () => 401)]);
    const taken = answers.find((res) => res.status === 200)!;
    const status = (await setup.message(setup.a, id)).delivery_status;
    expect({ updated: taken.body.updated, status }).toEqual({
      updated: 1,
      status: answers[0].status === 200 ? 'delivered' : 'complained',
    });
    // A request with a nested field deeper than JSON.stringify goes is refused, not a 500.
    const deep = await request(setup.ctx.app)
      .post('/webhooks/mailgun/events')
      .set('content-type', 'application/json')
      .send(`{"signature":${JSON.stringify(signature())},"event-data":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expect({ status: deep.status, code: deep.body.error?.code }).toEqual({ status: 400, code: 'bad_request' });
  });

  it.each([
    ['no event-data', { hello: 'world' }],
    ['an event-data that is a string', { 'event-data': 'delivered' }],
    ['an event name that is a number', { 'event-data': { event: 7 } }],
    ['a delivered event naming no message', { 'event-data': { event: 'delivered', recipient: 'a@example.com' } }],
    [
      'a message-id that is an object',
      { 'event-data': { event: 'failed', severity: 'permanent', message: { headers: { 'message-id': {} } } } },
    ],
  ])('answers %s with 400', async (_name, body) => {
    const res = await request(setup.ctx.app)
      .post('/webhooks/mailgun/events')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ signature: signature(), ...body }));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
  });

  it('answers a body that is not JSON with 400', async () => {
    const res = await request(setup.ctx.app)
      .post('/webhooks/mailgun/events')
      .set('content-type', 'application/json')
      .send('{"signature":');
    expect(res.status).toBe(400);
  });
});

describe('mailgunStatus', () => {
  it.each([
    [{ event: 'delivered' }, 'delivered'],
    [{ event: 'complained' }, 'complained'],
    [{ event: 'failed', severity: 'permanent', reason: 'bounce' }, 'bounced'],
    [{ event: 'failed', severity: 'permanent', reason: 'suppress-bounce' }, 'bounced'],
    [{ event: 'failed', severity: 'permanent', reason: 'generic', code: 550 }, 'bounced'],
    [{ event: 'failed', severity: 'permanent', reason: 'old', code: 421 }, 'failed'],
    [{ event: 'failed', severity: 'permanent', reason: 'suppress-complaint' }, 'failed'],
    [{ event: 'failed', severity: 'temporary', reason: 'generic', code: 421 }, undefined],
    [{ event: 'opened' }, undefined],
    [{ event: 'accepted' }, undefined],
  ])('maps %p to %p', (event, status) => {
    expect(mailgunStatus(event)).toBe(status);
  });

  it('reads the documented events, the message id without angle brackets', () => {
    const [event] = mailgunDeliveryEvents({
      'event-data': { ...documented('delivered.json'), message: { headers: { 'message-id': '<abc@example.com>' } } },
    });
    expect(event).toMatchObject({ provider: 'mailgun', transportMessageIds: ['abc@example.com'], status: 'delivered' });
    expect(mailgunDeliveryEvents({ 'event-data': documented('failed-temporary.json') })).toEqual([]);
  });
});
