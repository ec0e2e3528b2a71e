/**
 * Retries and webhooks under races: a manual retry while the attempt is under way (a second
 * attempt beside it raced it to record its outcome, and a quick failure disabled the webhook of a
 * delivery that then succeeded), a retry racing its webhook's deletion (was a 500), and inbox ids
 * in capitals (the same inbox, as elsewhere).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { deliveriesWhen, startWebhookTestbed, type WebhookTestbed } from './testbed.js';

jest.setTimeout(60_000);

let testbed: WebhookTestbed;
let receiver: http.Server;
let port: number;
/** Requests received, per webhook-id. */
const seen = new Map<string, number>();

beforeAll(async () => {
  // Schedule of one retry: two attempts in all; a receiver gets 10 s to answer.
  testbed = await startWebhookTestbed(
    { INBOX_WEBHOOK_RETRY_SCHEDULE: '1', INBOX_WEBHOOK_TIMEOUT_SECONDS: '10' },
    { sweepSeconds: 1, jobs: true },
  );
  // 1st request of a delivery: 500 at once. 2nd: 200 after 3 s. Any later one: 500 at once.
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      if (n === 2) setTimeout(() => res.writeHead(200).end(), 3000);
      else res.writeHead(500).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await new Promise((resolve) => receiver.once('listening', resolve));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(async () => {
  await testbed?.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

it('leaves an attempt under way alone on a manual retry: no second attempt beside it, the webhook kept enabled', async () => {
  const { ctx } = testbed;
  const org = await createOrganization(ctx.app, 'Retry in flight');
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'inflight', organization_id: org.id });
  const { key } = await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send', 'manage'] });
  const webhook = (
    await as(ctx.app, key)
      .post('/v1/webhooks', { url: `http://127.0.0.1:${port}/hook`, event_types: ['message.received'] })
      .expect(201)
  ).body as { id: string };
  await as(ctx.app, key)
    .post('/v1/messages', { inbox_id: inbox.id, to: [inbox.email_address], subject: 'In flight', body: 'Hello' })
    .expect(201);

  // The first attempt failed; the scheduled retry (the last attempt) is now under way (its answer takes 3 s).
  const deadline = Date.now() + 20_000;
  while (![...seen.values()].includes(2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const [deliveryId] = [...seen.entries()].find(([, n]) => n === 2)!;

  // "Attempt again now", while the attempt is under way: answered with the delivery as it is.
  const retried = await as(ctx.app, key).post(`/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/retry`).expect(202);
  expect(retried.body.status).toBe('pending');

  const [delivery] = await deliveriesWhen(ctx, webhook.id, (items) => items[0]?.status === 'delivered', 20_000);
  await new Promise((r) => setTimeout(r, 1000));
  const shown = (await as(ctx.app, key).get(`/v1/webhooks/${webhook.id}`).expect(200)).body;
  const final = (await as(ctx.app, key).get(`/v1/webhooks/${webhook.id}/deliveries`).expect(200)).body.items[0];
  // Two requests: the first attempt and the scheduled retry (answered 200 after 3 s); the manual retry started none.
  expect(seen.get(deliveryId)).toBe(2);
  expect({ delivery: final.status, enabled: shown.enabled, reason: shown.disabled_reason }).toEqual({
    delivery: 'delivered',
    enabled: true,
    reason: null,
  });
  expect(delivery).toBeDefined();
});

it('a retry racing the deletion of its webhook answers as it came first, never 500', async () => {
  const { ctx } = testbed;
  const org = await createOrganization(ctx.app, 'Retry vs delete');
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'retry-delete', organization_id: org.id });
  const { key } = await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send', 'manage'] });
  const webhook = (
    await as(ctx.app, key)
      .post('/v1/webhooks', { url: `http://127.0.0.1:${port}/hook`, event_types: ['message.received'] })
      .expect(201)
  ).body as { id: string };
  await as(ctx.app, key)
    .post('/v1/messages', { inbox_id: inbox.id, to: [inbox.email_address], subject: 'Retry vs delete', body: 'Hello' })
    .expect(201);
  const [delivery] = await deliveriesWhen(ctx, webhook.id, (items) => items[0] !== undefined);

  // Another request deletes the webhook while the retry queues its job.
  const jobs = ctx.deps.jobs as unknown as { send: (...args: unknown[]) => Promise<unknown> };
  const send = jobs.send.bind(jobs);
  jobs.send = async (...args: unknown[]) => {
    await as(ctx.app, key).delete(`/v1/webhooks/${webhook.id}`).expect(204);
    return send(...args);
  };
  try {
    // The retry was queued before the deletion: its answer shows the delivery as it queued it.
    const res = await as(ctx.app, key).post(`/v1/webhooks/${webhook.id}/deliveries/${delivery!.id}/retry`);
    expect({ status: res.status, id: res.body.id, state: res.body.status }).toEqual({
      status: 202,
      id: delivery!.id,
      state: 'pending',
    });
  } finally {
    jobs.send = send;
  }
  // The webhook is gone with its deliveries, and so is any later retry of them.
  await as(ctx.app, key).get(`/v1/webhooks/${webhook.id}`).expect(404);
  const again = await as(ctx.app, key).post(`/v1/webhooks/${webhook.id}/deliveries/${delivery!.id}/retry`);
  expect({ status: again.status, code: again.body.error?.code }).toEqual({ status: 404, code: 'not_found' });
});

it('takes an inbox id in capitals as the same inbox, as the other routes do', async () => {
  const { ctx } = testbed;
  const org = await createOrganization(ctx.app, 'Case');
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'case', organization_id: org.id });
  const { key } = await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'manage'] });
  const upper = inbox.id.toUpperCase();
  // The same id is found elsewhere.
  await as(ctx.app, key).get(`/v1/inboxes/${upper}`).expect(200);
  await as(ctx.app, key).get(`/v1/events?inbox_id=${upper}`).expect(200);
  const res = await as(ctx.app, key).post('/v1/webhooks', {
    url: 'https://hooks.example.com/x',
    event_types: ['message.received'],
    inbox_ids: [upper],
  });
  expect({ status: res.status, inbox_ids: res.body.inbox_ids }).toEqual({ status: 201, inbox_ids: [inbox.id] });
});
