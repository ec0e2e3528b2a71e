import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import request from 'supertest';
import {
  checkSendgridSignature,
  sendgridDeliveryEvents,
  sendgridPublicKey,
  sendgridTransportIds,
} from '../../src/webhooks/providers/sendgrid-events.js';
import { fixture } from './helpers.js';
import { deliverySetup } from './delivery-helpers.js';

jest.setTimeout(60_000);

const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
/** The X-Message-Id the SendGrid stand-in answers the next sends with, else a fresh one. */
const nextIds: string[] = [];
let setup: Awaited<ReturnType<typeof deliverySetup>>;

beforeAll(async () => {
  setup = await deliverySetup(
    () => ({ status: 202, headers: { 'x-message-id': nextIds.shift() ?? freshId() } }),
    (url) => ({
      EMAIL_PROVIDER: 'sendgrid',
      SENDGRID_API_KEY: 'SG.test',
      SENDGRID_BASE_URL: url,
      // As SendGrid's settings show it: base64 of the DER public key.
      SENDGRID_EVENT_WEBHOOK_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    }),
  );
});
afterAll(() => setup.close());

const freshId = () => crypto.randomUUID().replaceAll('-', '').slice(0, 22);

/** A documented SendGrid event (test/fixtures/delivery/sendgrid), its one event, naming `xMessageId` when given. */
const documented = (name: string, xMessageId?: string) => {
  const [event] = JSON.parse(fixture(`delivery/sendgrid/${name}`).toString('utf8')) as Record<string, unknown>[];
  if (xMessageId) event!.sg_message_id = `${xMessageId}.filterdrecv-5bd4d8c5b4-2kvzj-1-5F5E6E0C-6.0`;
  return event!;
};

/** Posts `body` (exactly these bytes) signed as SendGrid signs, with `key` and `timestamp`. */
function post(body: string | Buffer, options: { key?: KeyObject; timestamp?: number; signature?: string } = {}) {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const signature =
    options.signature ??
    sign('sha256', Buffer.concat([Buffer.from(timestamp), Buffer.from(body)]), options.key ?? privateKey).toString('base64');
  return (
    request(setup.ctx.app)
      .post('/webhooks/sendgrid/events')
      // supertest would serialise a Buffer as JSON: bytes that are no text go as a stream of bytes.
      .set('content-type', Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json;charset=utf-8')
      .set('x-twilio-email-event-webhook-signature', signature)
      .set('x-twilio-email-event-webhook-timestamp', timestamp)
      .send(body)
  );
}

async function sendAs(org: 'a' | 'b', xMessageId: string) {
  nextIds.push(xMessageId);
  const id = await setup.send(setup[org]);
  expect((await setup.ctx.db.message.findUniqueOrThrow({ where: { id } })).transportMessageId).toBe(xMessageId);
  return id;
}

describe('POST /webhooks/sendgrid/events', () => {
  it('applies a batch in order: delivered then a spam report; other events change nothing; one organization only', async () => {
    // The documented events name 14c5d75ce93.dfd.64b469.filter0001...: X-Message-Id 14c5d75ce93.
    const id = await sendAs('a', '14c5d75ce93');
    const other = await sendAs('b', freshId());
    const batch = ['processed.json', 'deferred.json', 'delivered.json', 'spamreport.json'].map((name) => documented(name));
    // Pretty-printed, as SendGrid's bytes need not be compact: the signature covers them as they are.
    const res = await post(JSON.stringify(batch, null, 2));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 2, matched: 2, updated: 1 } });
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'complained',
      delivery_detail: {
        provider: 'sendgrid',
        event: 'spamreport',
        recipient: 'alex@example.com',
        reason: null,
        timestamp: '2017-12-15T00:59:29.000Z',
      },
    });
    const events = await setup.deliveryEvents(setup.a, id);
    expect(events.map((event) => event.type)).toEqual(['message.delivered', 'message.complained']);
    expect(events[0]).toMatchObject({ organization_id: setup.a.organization.id, data: { id, delivery_status: 'complained' } });
    expect((await setup.message(setup.b, other)).delivery_status).toBe('sent');
    expect(await setup.deliveryEvents(setup.b)).toEqual([]);
  });

  it.each([
    ['bounce.json', 'bounced', 'bounce: 5.0.0: 500 unknown recipient'],
    ['blocked.json', 'bounced', 'blocked: 5.0.0: 500 unknown recipient'],
    ['dropped.json', 'failed', '5.0.0: Bounced Address'],
  ])('records %s as %s', async (name, status, reason) => {
    const xMessageId = freshId();
    const id = await sendAs('a', xMessageId);
    expect((await post(JSON.stringify([documented(name, xMessageId)]))).body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect(await setup.message(setup.a, id)).toMatchObject({ delivery_status: status, delivery_detail: { reason } });
    expect((await setup.deliveryEvents(setup.a, id)).map((event) => event.type)).toEqual([`message.${status}`]);
  });

  it('answers a replayed request 200, changing nothing', async () => {
    const xMessageId = freshId();
    const id = await sendAs('a', xMessageId);
    const body = JSON.stringify([documented('delivered.json', xMessageId)]);
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = sign('sha256', Buffer.from(`${timestamp}${body}`), privateKey).toString('base64');
    expect((await post(body, { timestamp, signature })).body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect((await post(body, { timestamp, signature })).body).toEqual({ events: 1, matched: 1, updated: 0 });
    expect(await setup.deliveryEvents(setup.a, id)).toHaveLength(1);
  });

  it('answers events of mail it did not send, and events it cannot match, 200, changing nothing', async () => {
    const before = await setup.ctx.db.event.count();
    const events = [
      documented('bounce.json', freshId()),
      // An asynchronous bounce carries no sg_message_id.
      { ...documented('bounce.json'), sg_message_id: undefined },
      { ...documented('delivered.json'), sg_message_id: 'nul\u0000id.filter', email: 'a\u0000b@example.com' },
      { ...documented('delivered.json'), sg_message_id: '\ud800.filter' },
    ];
    const res = await post(JSON.stringify(events));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 3, matched: 0, updated: 0 } });
    expect(await setup.ctx.db.event.count()).toBe(before);
  });

  it('refuses a forged, altered or missing signature (401), changing nothing', async () => {
    const xMessageId = freshId();
    const id = await sendAs('a', xMessageId);
    const body = JSON.stringify([documented('bounce.json', xMessageId)]);
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    expect((await post(body, { key: other })).status).toBe(401);
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = sign('sha256', Buffer.from(`${timestamp}${body}`), privateKey).toString('base64');
    expect((await post(body.replace('bounce', 'spamreport'), { timestamp, signature })).status).toBe(401);
    expect((await post(body, { timestamp: timestamp + 1, signature })).status).toBe(401);
    expect((await post(body, { signature: 'not base64!' })).status).toBe(401);
    const unsigned = await request(setup.ctx.app)
      .post('/webhooks/sendgrid/events')
      .set('content-type', 'application/json')
      .send(body);
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error.code).toBe('unauthorized');
    expect((await setup.message(setup.a, id)).delivery_status).toBe('sent');
  });

  it('takes a signature of any age: SendGrid retries after an outage, and a replay changes nothing', async () => {
    const xMessageId = freshId();
    const id = await sendAs('a', xMessageId);
    const body = JSON.stringify([documented('bounce.json', xMessageId)]);
    const res = await post(body, { timestamp: Math.floor(Date.now() / 1000) - 30 * 24 * 3600 });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 1, updated: 1 } });
    expect((await setup.message(setup.a, id)).delivery_status).toBe('bounced');
  });

  it("matches an X-Message-Id that holds dots, as SendGrid's documented events name it", async () => {
    // sg_message_id 14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0, smtp-id <14c5d75ce93.dfd.64b469@ismtpd-555>.
    const id = await sendAs('b', '14c5d75ce93.dfd.64b469');
    const res = await post(JSON.stringify([documented('delivered.json')]));
    expect(res.body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect((await setup.message(setup.b, id)).delivery_status).toBe('delivered');
  });

  it('applies the events of a batch around elements that are no event, and takes one event alone', async () => {
    const [first, second, alone] = [freshId(), freshId(), freshId()];
    const firstId = await sendAs('a', first);
    const secondId = await sendAs('a', second);
    const batch = [
      'delivered',
      null,
      { sg_message_id: 'x.y' },
      { ...documented('delivered.json', first), timestamp: 'yesterday', email: null, response: 250 },
      { ...documented('bounce.json', second), reason: { text: 'an object' } },
    ];
    expect((await post(JSON.stringify(batch))).body).toEqual({ events: 2, matched: 2, updated: 2 });
    expect(await setup.message(setup.a, firstId)).toMatchObject({
      delivery_status: 'delivered',
      delivery_detail: { recipient: null, reason: null },
    });
    expect((await setup.message(setup.a, secondId)).delivery_status).toBe('bounced');
    const aloneId = await sendAs('a', alone);
    expect((await post(JSON.stringify(documented('spamreport.json', alone)))).body).toEqual({
      events: 1,
      matched: 1,
      updated: 1,
    });
    expect((await setup.message(setup.a, aloneId)).delivery_status).toBe('complained');
  });

  it.each([
    ['not JSON', '[{"event":'],
    ['a string', JSON.stringify('delivered')],
    ['a number', '42'],
    ['bytes that are not UTF-8', Buffer.from([0x5b, 0xff, 0x5d])],
    ['more than 5,000 events', JSON.stringify(Array.from({ length: 5001 }, () => ({ event: 'open' })))],
  ])('answers %s (signed) with 400', async (_name, body) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
  });

  it('applies a bounce whose reason has an emoji across the 1,000th character the detail keeps', async () => {
    const xMessageId = freshId();
    const id = await sendAs('a', xMessageId);
    // The detail's reason is `bounce: <reason>`: the emoji takes its 1,000th and 1,001st units.
    const reason = `${'r'.repeat(999 - 'bounce: '.length)}😀 and the rest of the SMTP reply`;
    const bounce = {
      ...documented('bounce.json', xMessageId),
      status: undefined,
      reason,
      timestamp: Math.floor(Date.now() / 1000),
    };
    const res = await post(JSON.stringify([bounce]));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 1, updated: 1 } });
    expect((await setup.message(setup.a, id)).delivery_status).toBe('bounced');
    expect((await setup.deliveryEvents(setup.a, id)).map((event) => event.type)).toEqual(['message.bounced']);
  });

  it('answers a body over 2 MB with 413', async () => {
    const res = await post(JSON.stringify([{ event: 'open', pad: 'x'.repeat(2 * 1024 * 1024) }]));
    expect(res.status).toBe(413);
  });
});

describe('SendGrid signatures and events, pure', () => {
  // SendGrid's own test vector (sendgrid/sendgrid-nodejs, packages/eventwebhook/src/eventwebhook.spec.js, MIT).
  const PUBLIC_KEY =
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA==';
  const SIGNATURE = 'MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0=';
  const TIMESTAMP = '1588788367';
  const PAYLOAD = JSON.stringify({ category: 'example_payload', event: 'test_event', message_id: 'message_id' });
  const check = (overrides: { body?: string; signature?: string; timestamp?: string; key?: string }) =>
    checkSendgridSignature(
      {
        body: Buffer.from(overrides.body ?? PAYLOAD),
        signature: overrides.signature ?? SIGNATURE,
        timestamp: overrides.timestamp ?? TIMESTAMP,
      },
      { publicKey: sendgridPublicKey(overrides.key ?? PUBLIC_KEY) },
    );

  it("verifies SendGrid's published example (of 2020: no age limit), and refuses it altered", () => {
    expect(check({})).toEqual({ valid: true });
    expect(check({ body: 'payload' }).valid).toBe(false);
    expect(check({ signature: SIGNATURE.replace('H2j', 'H3j') }).valid).toBe(false);
    expect(check({ timestamp: '1588788368' }).valid).toBe(false);
    expect(check({ timestamp: 'timestamp' }).valid).toBe(false);
    expect(
      check({
        key: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqTxd43gyp8IOEto2LdIfjRQrIbsd4SXZkLW6jDutdhXSJCWHw8REntlo7aNDthvj+y7GjUuFDb/R1NGe1OPzpA==',
      }).valid,
    ).toBe(false);
  });

  it('takes the key as PEM too, and refuses what is no ECDSA public key', () => {
    const pem = sendgridPublicKey(PUBLIC_KEY).export({ type: 'spki', format: 'pem' }).toString();
    expect(check({ key: pem })).toEqual({ valid: true });
    expect(() => sendgridPublicKey('not a key')).toThrow();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' });
    expect(() => sendgridPublicKey(rsa.toString('base64'))).toThrow(/ECDSA/);
  });

  it('tries each prefix of an sg_message_id that ends before a dot, longest first', () => {
    expect(sendgridTransportIds('14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0')).toEqual([
      '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
      '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88',
      '14c5d75ce93.dfd.64b469.filter0001.16648',
      '14c5d75ce93.dfd.64b469.filter0001',
      '14c5d75ce93.dfd.64b469',
      '14c5d75ce93.dfd',
      '14c5d75ce93',
    ]);
    expect(sendgridTransportIds(' W86EgYT6SQKk0lRflfLRsA.filterdrecv-5bd4d8c5b4-2kvzj-1-5F5E6E0C-6.0').at(-1)).toBe(
      'W86EgYT6SQKk0lRflfLRsA',
    );
    expect(sendgridTransportIds('plain')).toEqual(['plain']);
    expect(sendgridTransportIds(' ')).toEqual([]);
    // At most twelve, however many dots.
    expect(sendgridTransportIds('a.'.repeat(10_000))).toHaveLength(12);
  });

  it('reads the documented events', () => {
    const events = sendgridDeliveryEvents(
      ['processed.json', 'deferred.json', 'delivered.json', 'bounce.json', 'blocked.json', 'dropped.json', 'spamreport.json'].map(
        (name) => documented(name),
      ),
    );
    expect(events.map((event) => [event.status, event.transportMessageIds.at(-3), event.detail.event])).toEqual([
      ['delivered', '14c5d75ce93.dfd.64b469', 'delivered'],
      ['bounced', '14c5d75ce93.dfd.64b469', 'bounce'],
      ['bounced', '14c5d75ce93.dfd.64b469', 'bounce'],
      ['failed', '14c5d75ce93.dfd.64b469', 'dropped'],
      ['complained', '14c5d75ce93.dfd.64b469', 'spamreport'],
    ]);
    expect(events[0]!.detail.reason).toBe('250 OK');
  });

  it('knows no event by a name an object inherits (constructor, toString, __proto__)', () => {
    const names = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];
    expect(sendgridDeliveryEvents(names.map((event) => ({ event, sg_message_id: 'abc.def' })))).toEqual([]);
  });
});

// Last: its 3,000 events would fill the other tests' first page of events.
describe('a batch as large as SendGrid sends', () => {
  it('applies 3,000 events of as many messages in one go (one update a message passed the transaction’s time)', async () => {
    const id = await sendAs('a', freshId());
    const prefix = `batch${Date.now()}x`;
    // 3,000 more messages sent through SendGrid, copied in SQL (sends would take minutes).
    const columns = (
      await setup.ctx.db.$queryRaw<{ column_name: string }[]>`
        SELECT column_name FROM information_schema.columns
         WHERE table_name = 'messages' AND table_schema = current_schema() AND is_generated = 'NEVER'
           AND column_name NOT IN ('id', 'transport_message_id', 'provider_message_id')`
    ).map((row) => `"${row.column_name}"`);
    await setup.ctx.db.$executeRawUnsafe(
      `INSERT INTO messages (id, transport_message_id, provider_message_id, ${columns.join(', ')})
       SELECT gen_random_uuid(), '${prefix}' || n, '<copy-${prefix}-' || n || '@x>', ${columns.join(', ')}
         FROM messages, generate_series(1, 3000) AS n WHERE id = '${id}'::uuid`,
    );
    const batch = Array.from({ length: 3000 }, (_, n) => ({
      ...documented('delivered.json'),
      sg_message_id: `${prefix}${n + 1}.filter0001`,
    }));
    const res = await post(JSON.stringify(batch));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 3000, matched: 3000, updated: 3000 } });
    expect(
      await setup.ctx.db.message.count({ where: { transportMessageId: { startsWith: prefix }, deliveryStatus: 'delivered' } }),
    ).toBe(3000);
    const events = await setup.ctx.db.event.findMany({
      where: { type: 'message.delivered', data: { path: ['delivery_status'], equals: 'delivered' } },
      select: { messageId: true },
    });
    expect(events.filter((event) => event.messageId !== id).length).toBeGreaterThanOrEqual(3000);
  });
});
