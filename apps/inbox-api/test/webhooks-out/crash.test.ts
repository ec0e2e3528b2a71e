/**
 * kill -9 of the service between the commit of an event's deliveries and their attempt: after a
 * restart on the same database the receiver gets the event exactly once, with the webhook-id the
 * delivery was given before the kill, once the lease the round gave it has ended. The service runs as its own process (src/server.ts, which
 * starts the fan-out and the delivery jobs) and kills itself at TEST_CRASH_POINT.
 */
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { call, crashTestService } from '../crash-service.js';
import { type Receiver, startReceiver } from './receiver.js';

jest.setTimeout(180_000);

const crash = crashTestService({
  label: 'inbox_hooks_crash',
  domain: 'hooks-crash.test',
  // The round leases its deliveries to the process that ran it (timeout + 10 s): after the kill they
  // come due when that lease ends. A short timeout keeps the wait short.
  env: { INBOX_WEBHOOK_ALLOW_PRIVATE: 'true', INBOX_WEBHOOK_SWEEP_SECONDS: '1', INBOX_WEBHOOK_TIMEOUT_SECONDS: '2' },
});
const { start, crashDuring } = crash;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

interface Inbox {
  id: string;
  email_address: string;
}

it('delivers an event whose deliveries committed before a kill -9 once after the restart, with the same webhook-id', async () => {
  const setup = await start();
  const sender = (await call<Inbox>(setup.url, 'POST', '/v1/inboxes', { name: 'Sender', email_username: 'sender' })).body!;
  const recipient = (await call<Inbox>(setup.url, 'POST', '/v1/inboxes', { name: 'Agent', email_username: 'agent' })).body!;
  const created = await call(setup.url, 'POST', '/v1/webhooks', {
    url: receiver.url('/ok/crash'),
    event_types: ['message.received'],
    inbox_ids: [recipient.id],
  });
  expect(created.status).toBe(201);
  const webhook = created.body as { id: string; secret: string };
  await setup.stop();

  await crashDuring('webhook-dispatch:committed', (baseUrl) =>
    call(baseUrl, 'POST', '/v1/messages', {
      inbox_id: sender.id,
      to: [recipient.email_address],
      subject: 'Survives a crash',
      body: 'Hello',
    }),
  );

  // Committed, not attempted.
  const [recorded, ...more] = await crash.db.webhookDelivery.findMany({ where: { webhookId: webhook.id } });
  expect(more).toEqual([]);
  expect(recorded).toMatchObject({ status: 'pending', attempts: 0 });
  expect(receiver.received.filter((r) => r.path === '/ok/crash')).toHaveLength(0);

  const restarted = await start();
  try {
    const [request] = await receiver.waitFor('/ok/crash', 1, 60_000);
    expect(request!.headers['webhook-id']).toBe(recorded!.id);
    const event = new StandardWebhook(webhook.secret).verify(request!.body, request!.headers as Record<string, string>);
    expect(event).toMatchObject({ type: 'message.received', inbox_id: recipient.id, data: { subject: 'Survives a crash' } });
    // Settled: delivered once, and nothing more arrives (the sweep runs every second).
    for (let i = 0; i < 50; i++) {
      if ((await crash.db.webhookDelivery.findUniqueOrThrow({ where: { id: recorded!.id } })).status === 'delivered') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(receiver.received.filter((r) => r.path === '/ok/crash')).toHaveLength(1);
    expect(await crash.db.webhookDelivery.findUniqueOrThrow({ where: { id: recorded!.id } })).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 204,
    });
    expect(await crash.db.webhookDelivery.count()).toBe(1);
  } finally {
    await restarted.stop();
  }
});
