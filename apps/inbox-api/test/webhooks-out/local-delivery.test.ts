/**
 * The fan-out attempts new deliveries in its own process right after its round commits
 * (dispatch.ts, createLocalDelivery): here no job worker runs and the sweep is five minutes away, so
 * every delivery that arrives was attempted in-process. A burst of messages (rounds committing
 * while the runners are busy) still gives each event exactly one delivery, attempted once.
 */
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import type { TestContext } from '../context.js';
import type { Receiver } from './receiver.js';
import { startWebhookTestbed, type WebhookTestbed } from './testbed.js';

jest.setTimeout(60_000);

let ctx: TestContext;
let receiver: Receiver;
let testbed: WebhookTestbed;

beforeAll(async () => {
  // No `deliver-webhook` job runs in this test.
  testbed = await startWebhookTestbed({}, { sweepSeconds: 300, jobs: false });
  ({ ctx, receiver } = testbed);
});
afterAll(() => testbed?.close());

// First in this file: no webhook exists yet.
it('writes nothing while no webhook is enabled; a webhook created or enabled again gets only the events after that', async () => {
  const org = await createOrganization(ctx.app, 'Idle fan-out');
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'idle-hooks', organization_id: org.id });
  const { key } = await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send', 'manage'] });
  const send = (subject: string) =>
    as(ctx.app, key)
      .post('/v1/messages', { inbox_id: inbox.id, to: [inbox.email_address], subject, body: 'Hello' })
      .expect(201);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
  const subjects = (path: string) =>
    receiver.received
      .filter((request) => request.path === path)
      .map((request) => (JSON.parse(request.body) as { data: { subject: string } }).data.subject);

  const cursor = () => ctx.deps.db.webhookDispatch.findUniqueOrThrow({ where: { id: 1 } });
  const before = await cursor();
  await send('Before any webhook');
  await settle();
  // Rounds ran (each commit announces itself) but wrote nothing: the cursor did not move, no delivery.
  expect(await cursor()).toEqual(before);
  expect(await ctx.deps.db.webhookDelivery.count()).toBe(0);

  const { body: webhook } = await as(ctx.app, key)
    .post('/v1/webhooks', { url: receiver.url('/ok/idle'), event_types: ['message.received'] })
    .expect(201);
  await send('First after creation');
  await receiver.waitFor('/ok/idle', 1);

  await as(ctx.app, key)
    .patch(`/v1/webhooks/${(webhook as { id: string }).id}`, { enabled: false })
    .expect(200);
  await send('While disabled');
  await settle();
  await as(ctx.app, key)
    .patch(`/v1/webhooks/${(webhook as { id: string }).id}`, { enabled: true })
    .expect(200);
  await send('After enabling again');
  await receiver.waitFor('/ok/idle', 2);
  await settle();
  expect(subjects('/ok/idle')).toEqual(['First after creation', 'After enabling again']);
});

it('delivers a burst of events in-process, each once, without the job queue or the sweep', async () => {
  const org = await createOrganization(ctx.app, 'Local delivery');
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'local-hooks', organization_id: org.id });
  const { key } = await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send', 'manage'] });
  const created = await as(ctx.app, key)
    .post('/v1/webhooks', { url: receiver.url('/ok/local'), event_types: ['message.received'] })
    .expect(201);
  const webhook = created.body as { id: string; secret: string };

  const subjects = Array.from({ length: 40 }, (_, i) => `Burst ${i}`);
  await Promise.all(
    subjects.map((subject) =>
      as(ctx.app, key)
        .post('/v1/messages', { inbox_id: inbox.id, to: [inbox.email_address], subject, body: 'Hello' })
        .expect(201),
    ),
  );

  const requests = await receiver.waitFor('/ok/local', subjects.length, 30_000);
  const events = requests.map(
    (request) =>
      new StandardWebhook(webhook.secret).verify(request.body, request.headers as Record<string, string>) as {
        data: { subject: string };
      },
  );
  expect(events.map((event) => event.data.subject).sort()).toEqual([...subjects].sort());
  // Settled: nothing more arrives, each delivery was attempted once and is delivered.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const all = receiver.received.filter((r) => r.path === '/ok/local');
  expect(all).toHaveLength(subjects.length);
  const rows = await ctx.deps.db.webhookDelivery.findMany({ where: { webhookId: webhook.id } });
  expect(rows).toHaveLength(subjects.length);
  expect(rows.every((row) => row.status === 'delivered' && row.attempts === 1)).toBe(true);
  expect(new Set(all.map((r) => r.headers['webhook-id']))).toEqual(new Set(rows.map((row) => row.id)));
});
