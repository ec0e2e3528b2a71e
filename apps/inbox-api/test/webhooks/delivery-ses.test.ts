import { as } from '../api-keys/helpers.js';
import { fixture, postSns, signingCertificate, signSns } from './helpers.js';
import { deliverySetup } from './delivery-helpers.js';
import { startProvider } from '../mail/helpers.js';
import { sesDeliveryEvents } from '../../src/webhooks/providers/ses-events.js';
import type { SnsEnvelope } from '../../src/webhooks/sns.js';

jest.setTimeout(60_000);

const TOPIC = 'arn:aws:sns:us-west-2:123456789012:ses-feedback';
const { certificate, privateKey } = signingCertificate();
/** The MessageId the SES stand-in answers the next sends with (the documented examples' ids), else a fresh one. */
const nextSesIds: string[] = [];
let setup: Awaited<ReturnType<typeof deliverySetup>>;
let certServer: Awaited<ReturnType<typeof startProvider>>;

beforeAll(async () => {
  certServer = await startProvider(() => ({ status: 200, body: certificate }));
  setup = await deliverySetup(
    () => {
      const next = nextSesIds.shift();
      if (next === 'REFUSE') {
        return {
          status: 400,
          headers: { 'x-amzn-errortype': 'MessageRejected' },
          body: { message: 'Email address is not verified.' },
        };
      }
      return { status: 200, body: { MessageId: next ?? `0000${crypto.randomUUID()}-000000` } };
    },
    (url) => ({
      EMAIL_PROVIDER: 'ses',
      SES_REGION: 'us-west-2',
      SES_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      SES_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      SES_ENDPOINT: url,
      SES_SNS_TOPIC_ARNS: TOPIC,
      TEST_SNS_URL_PREFIX: certServer.url,
    }),
  );
});
afterAll(async () => {
  await setup.close();
  await certServer.close();
});

/** A documented SES notification (test/fixtures/delivery/ses), as JSON. */
const documented = (name: string) => JSON.parse(fixture(`delivery/ses/${name}`).toString('utf8')) as Record<string, unknown>;

/** The notification in an SNS envelope signed as SNS signs it. */
function signed(notification: unknown): SnsEnvelope {
  const envelope: SnsEnvelope = {
    Type: 'Notification',
    MessageId: crypto.randomUUID(),
    TopicArn: TOPIC,
    Message: JSON.stringify(notification),
    Timestamp: new Date().toISOString(),
  };
  return signSns(envelope, { privateKey, certUrl: `${certServer.url}/cert.pem`, version: '1' });
}

/** Sends from org a with SES answering `sesId`, as the documented examples name their mail. */
async function sendAs(org: 'a' | 'b', sesId: string) {
  nextSesIds.push(sesId);
  const id = await setup.send(setup[org]);
  const row = await setup.ctx.db.message.findUniqueOrThrow({ where: { id } });
  expect(row.transportMessageId).toBe(sesId);
  return id;
}

describe('SES delivery notifications through SNS', () => {
  it('records the SES MessageId of a send, and delivery_status sent', async () => {
    const id = await sendAs('a', `0000${crypto.randomUUID()}-000000`);
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'sent',
      delivery_detail: { provider: 'ses', event: 'send', recipient: null, reason: null },
    });
  });

  it('marks a send SES refuses failed, with its reason and message.failed, and no provider id', async () => {
    nextSesIds.push('REFUSE');
    const res = await as(setup.ctx.app, setup.a.key).post('/v1/messages', {
      inbox_id: setup.a.inbox.id,
      to: ['jane@example.com'],
      subject: 'Refused',
      body: 'Hello',
    });
    expect(res.status).toBe(502);
    const id = res.body.error.details.message_id as string;
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'failed',
      delivery_detail: { provider: 'ses', event: 'send', reason: expect.stringContaining('Email address is not verified.') },
    });
    expect((await setup.ctx.db.message.findUniqueOrThrow({ where: { id } })).transportMessageId).toBeNull();
    expect((await setup.deliveryEvents(setup.a, id)).map((event) => event.type)).toEqual(['message.failed']);
  });

  it('moves a message to delivered, then bounced, then complained, one event each, in its organization only', async () => {
    const delivery = documented('delivery.json');
    const sesId = (delivery.mail as { messageId: string }).messageId;
    const id = await sendAs('a', sesId);
    const other = await sendAs('b', `0000${crypto.randomUUID()}-000000`);

    const res = await postSns(setup.ctx.app, signed(delivery));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 1, updated: 1 } });
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'delivered',
      delivery_detail: {
        provider: 'ses',
        event: 'Delivery',
        recipient: 'jane@example.com',
        reason: '250 ok:  Message 64111812 accepted',
        timestamp: '2016-01-27T14:59:38.237Z',
      },
    });
    const [delivered] = await setup.deliveryEvents(setup.a, id);
    expect(delivered).toMatchObject({
      type: 'message.delivered',
      organization_id: setup.a.organization.id,
      data: { id, delivery_status: 'delivered' },
    });

    // The documented bounce and complaint, about the same message (the id is the documented delivery's).
    const bounce = documented('bounce-with-dsn.json');
    (bounce.mail as { messageId: string }).messageId = sesId;
    expect((await postSns(setup.ctx.app, signed(bounce))).body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'bounced',
      delivery_detail: {
        event: 'Bounce',
        recipient: 'jane@example.com',
        reason: 'Permanent/General: smtp; 550 5.1.1 <jane@example.com>... User',
      },
    });
    const complaint = documented('complaint-with-feedback.json');
    (complaint.mail as { messageId: string }).messageId = sesId;
    await postSns(setup.ctx.app, signed(complaint)).expect(200);
    expect(await setup.message(setup.a, id)).toMatchObject({
      delivery_status: 'complained',
      delivery_detail: { event: 'Complaint', recipient: 'richard@example.com', reason: 'abuse' },
    });
    expect((await setup.deliveryEvents(setup.a, id)).map((event) => event.type)).toEqual([
      'message.delivered',
      'message.bounced',
      'message.complained',
    ]);

    // A late delivery (another recipient) changes nothing: the status only moves forward.
    expect((await postSns(setup.ctx.app, signed(delivery))).body).toEqual({ events: 1, matched: 1, updated: 0 });
    expect((await setup.message(setup.a, id)).delivery_status).toBe('complained');
    expect(await setup.deliveryEvents(setup.a, id)).toHaveLength(3);

    // The other organization's message and events are untouched.
    expect((await setup.message(setup.b, other)).delivery_status).toBe('sent');
    expect(await setup.deliveryEvents(setup.b)).toEqual([]);
  });

  it('answers a replayed notification 200 and changes nothing', async () => {
    const sesId = `0000${crypto.randomUUID()}-000000`;
    const id = await sendAs('a', sesId);
    const envelope = signed({
      ...documented('delivery.json'),
      mail: { ...(documented('delivery.json').mail as object), messageId: sesId },
    });
    expect((await postSns(setup.ctx.app, envelope)).body).toEqual({ events: 1, matched: 1, updated: 1 });
    expect((await postSns(setup.ctx.app, envelope)).body).toEqual({ events: 1, matched: 1, updated: 0 });
    expect(await setup.deliveryEvents(setup.a, id)).toHaveLength(1);
  });

  it('takes the notifications at /webhooks/ses/events too, the path of the other providers’ events', async () => {
    const sesId = `0000${crypto.randomUUID()}-000000`;
    const id = await sendAs('a', sesId);
    const bounce = documented('bounce-with-dsn.json');
    (bounce.mail as { messageId: string }).messageId = sesId;
    const res = await postSns(setup.ctx.app, signed(bounce), '/webhooks/ses/events');
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 1, updated: 1 } });
    expect((await setup.message(setup.a, id)).delivery_status).toBe('bounced');
    const forged = { ...signed(bounce), Signature: 'AAAA' };
    expect((await postSns(setup.ctx.app, forged, '/webhooks/ses/events')).status).toBe(401);
  });

  it('answers notifications of mail it did not send 200, changing nothing (a real SES bounce)', async () => {
    const before = await setup.ctx.db.event.count();
    const envelope = JSON.parse(fixture('inbound/ses-sns/hard_bounce_sns_body.json').toString('utf8')) as SnsEnvelope;
    const res = await postSns(setup.ctx.app, signed(JSON.parse(envelope.Message)));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 0, updated: 0 } });
    expect(await setup.ctx.db.event.count()).toBe(before);
  });

  it("answers event publishing's other events 200 and changes nothing (Send, Open, Click, DeliveryDelay, ...)", async () => {
    const sesId = `0000${crypto.randomUUID()}-000000`;
    const id = await sendAs('a', sesId);
    const mail = {
      timestamp: '2016-10-19T23:20:52.240Z',
      source: 'sender@example.com',
      messageId: sesId,
      destination: ['a@example.com'],
    };
    // Shapes of the AWS documentation's event publishing examples (event-publishing-retrieving-sns-examples).
    for (const [type, detail] of [
      ['Send', { send: {} }],
      ['Open', { open: { ipAddress: '192.0.2.1', timestamp: '2017-08-09T22:00:19.652Z', userAgent: 'Mozilla/5.0' } }],
      ['Click', { click: { ipAddress: '192.0.2.1', link: 'http://docs.aws.amazon.com', timestamp: '2017-08-09T23:51:25.570Z' } }],
      [
        'DeliveryDelay',
        {
          deliveryDelay: {
            timestamp: '2020-06-16T00:15:40.641Z',
            delayType: 'TransientCommunicationFailure',
            delayedRecipients: [],
          },
        },
      ],
      ['Rendering Failure', { failure: { errorMessage: 'Attribute x is not present', templateName: 'MyTemplate' } }],
      [
        'Subscription',
        { subscription: { contactList: 'x', timestamp: '2022-01-12T01:00:14.340Z', source: 'UnsubscribeHeader' } },
      ],
    ] as const) {
      const res = await postSns(setup.ctx.app, signed({ eventType: type, mail, ...detail }));
      expect({ type, status: res.status, body: res.body }).toEqual({ type, status: 200, body: { ignored: type } });
    }
    expect((await setup.message(setup.a, id)).delivery_status).toBe('sent');
    expect(await setup.deliveryEvents(setup.a, id)).toEqual([]);
  });

  it('refuses a forged notification (401) and changes nothing', async () => {
    const sesId = `0000${crypto.randomUUID()}-000000`;
    const id = await sendAs('a', sesId);
    const good = signed({ ...documented('bounce-with-dsn.json'), mail: { messageId: sesId } });
    const forged = { ...good, Message: good.Message.replace('Permanent', 'Transient') };
    expect((await postSns(setup.ctx.app, forged)).status).toBe(401);
    const otherKey = signingCertificate().privateKey;
    const wrongKey = signSns(
      { ...good, Signature: undefined },
      { privateKey: otherKey, certUrl: `${certServer.url}/cert.pem`, version: '2' },
    );
    expect((await postSns(setup.ctx.app, wrongKey)).status).toBe(401);
    expect((await setup.message(setup.a, id)).delivery_status).toBe('sent');
  });

  it.each([
    [
      'a bounce with no recipients list',
      { notificationType: 'Bounce', bounce: { bounceType: 'Permanent' }, mail: { messageId: 'x' } },
    ],
    ['a delivery with no mail', { notificationType: 'Delivery', delivery: { recipients: ['a@example.com'] } }],
    [
      'a complaint whose recipients are not a list',
      { notificationType: 'Complaint', complaint: { complainedRecipients: 'a' }, mail: { messageId: 'x' } },
    ],
    ['a message id that is a number', { notificationType: 'Delivery', delivery: { recipients: [] }, mail: { messageId: 7 } }],
  ])('answers %s with 400', async (_name, notification) => {
    const res = await postSns(setup.ctx.app, signed(notification));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
  });
});

describe('sesDeliveryEvents', () => {
  it('reads the documented examples, one event per recipient', () => {
    expect(sesDeliveryEvents(documented('bounce-with-dsn.json'))).toEqual([
      {
        provider: 'ses',
        transportMessageIds: ['00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000'],
        status: 'bounced',
        detail: {
          provider: 'ses',
          event: 'Bounce',
          recipient: 'jane@example.com',
          reason: 'Permanent/General: smtp; 550 5.1.1 <jane@example.com>... User',
          timestamp: '2016-01-27T14:59:38.237Z',
        },
      },
    ]);
    expect(sesDeliveryEvents(documented('complaint-with-feedback.json')).map((event) => event.status)).toEqual(['complained']);
    expect(sesDeliveryEvents(documented('delivery.json')).map((event) => [event.status, event.detail.recipient])).toEqual([
      ['delivered', 'jane@example.com'],
    ]);
  });

  it('reads event publishing (eventType) and its Reject', () => {
    const [event] = sesDeliveryEvents({ eventType: 'Reject', mail: { messageId: 'm-1' }, reject: { reason: 'Bad content' } });
    expect(event).toMatchObject({
      transportMessageIds: ['m-1'],
      status: 'failed',
      detail: { event: 'Reject', reason: 'Bad content' },
    });
  });
});
