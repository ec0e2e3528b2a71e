/**
 * Deliveries in the middle of a long retry schedule (30 s, then 30 s): a manual retry keeps the
 * schedule of a delivery still in it, and a delivery whose event went with its deleted inbox fails
 * once, without disabling its webhook. The deleted inbox's events are gone from GET /v1/events.
 */
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import type { TestContext } from '../context.js';
import type { Receiver } from './receiver.js';
import { deliveriesWhen, startWebhookTestbed, type WebhookTestbed } from './testbed.js';

jest.setTimeout(60_000);

let ctx: TestContext;
let receiver: Receiver;
let testbed: WebhookTestbed;
let organization: { id: string };
let sender: { id: string; email_address: string };
let key: string;

beforeAll(async () => {
  testbed = await startWebhookTestbed(
    { INBOX_WEBHOOK_RETRY_SCHEDULE: '30,30', INBOX_WEBHOOK_TIMEOUT_SECONDS: '2' },
    { sweepSeconds: 1, jobs: true },
  );
  ({ ctx, receiver } = testbed);
  organization = await createOrganization(ctx.app, 'Schedules');
  sender = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'schedule-sender', organization_id: organization.id });
  key = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read', 'send', 'manage'] }))
    .key;
});
afterAll(() => testbed?.close());

/** A webhook of `inbox`'s received mail to a receiver that fails, and its first delivery once its first attempt failed. */
async function failingDelivery(inbox: { id: string; email_address: string }, subject: string) {
  const webhook = (
    await as(ctx.app, key)
      .post('/v1/webhooks', { url: receiver.url('/fail/schedule'), event_types: ['message.received'], inbox_ids: [inbox.id] })
      .expect(201)
  ).body as { id: string };
  await as(ctx.app, key)
    .post('/v1/messages', { inbox_id: sender.id, to: [inbox.email_address], subject, body: 'Hello' })
    .expect(201);
  const [delivery] = await deliveriesWhen(ctx, webhook.id, (items) => items[0]?.attempts === 1);
  expect(delivery).toMatchObject({ status: 'pending', next_attempt_at: expect.any(String) });
  return { webhook, delivery: delivery! };
}

it('a manual retry of a delivery still in its schedule is its next attempt: a failure leaves the rest of the schedule', async () => {
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'schedule-kept', organization_id: organization.id });
  const { webhook, delivery } = await failingDelivery(inbox, 'Retried by hand');
  await as(ctx.app, key).post(`/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`).expect(202);
  const [retried] = await deliveriesWhen(ctx, webhook.id, (items) => items[0]?.attempts === 2);
  expect(retried).toMatchObject({ status: 'pending', last_error: 'HTTP 500' });
  // The schedule's second delay, from the manual attempt.
  const dueIn = new Date(retried!.next_attempt_at!).getTime() - Date.now();
  expect(dueIn).toBeGreaterThan(20_000);
  expect((await as(ctx.app, key).get(`/v1/webhooks/${webhook.id}`).expect(200)).body.enabled).toBe(true);
  await as(ctx.app, key).delete(`/v1/webhooks/${webhook.id}`).expect(204);
});

it('deleting an inbox removes its events, and a delivery of one fails at its next attempt without disabling the webhook', async () => {
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, {
    email_username: 'schedule-deleted',
    organization_id: organization.id,
  });
  const { webhook, delivery } = await failingDelivery(inbox, 'Mail of a deleted inbox');
  expect(await ctx.db.event.count({ where: { inboxId: inbox.id } })).toBe(1);
  await as(ctx.app, key).delete(`/v1/inboxes/${inbox.id}`).expect(204);
  expect(await ctx.db.event.count({ where: { inboxId: inbox.id } })).toBe(0);
  const events = (await as(ctx.app, key).get('/v1/events?limit=500').expect(200)).body.items as { inbox_id: string }[];
  expect(events.filter((event) => event.inbox_id === inbox.id)).toEqual([]);

  // Made due now (in its schedule, so not `manual`): its event is gone, which no retry brings back.
  await as(ctx.app, key).post(`/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`).expect(202);
  const [ended] = await deliveriesWhen(ctx, webhook.id, (items) => items[0]?.attempts === 2);
  expect(ended).toMatchObject({
    status: 'failed',
    next_attempt_at: null,
    last_error: 'The event is no longer kept (its inbox was deleted, or INBOX_EVENT_RETENTION_DAYS passed)',
  });
  expect((await as(ctx.app, key).get(`/v1/webhooks/${webhook.id}`).expect(200)).body).toMatchObject({
    enabled: true,
    disabled_reason: null,
  });
  await as(ctx.app, key).delete(`/v1/webhooks/${webhook.id}`).expect(204);
});
