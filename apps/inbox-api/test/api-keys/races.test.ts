/**
 * Deleting organizations, inboxes and API keys while requests use them: every answer is one the
 * API documents (never a 500), the outcome is consistent with it, and nothing is sent with a key
 * once its revocation has answered, on any replica.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from './helpers.js';

/** A provider that takes its time: each message is accepted SMTP_DELAY_MS after its data arrived. */
const SMTP_DELAY_MS = 150;
let smtp: SMTPServer;
/** Each recipient address the provider accepted, and when. */
const accepted: { to: string; at: number }[] = [];

let ctx: TestContext;
beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () =>
        setTimeout(() => {
          for (const recipient of session.envelope.rcptTo) accepted.push({ to: recipient.address, at: Date.now() });
          callback();
        }, SMTP_DELAY_MS),
      );
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  ctx = await createTestContext({
    INBOX_API_KEYS: OPERATOR_KEY,
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LIMIT_PER_HOUR: '0',
    // The revoked key's attempts would reach the wrong-key limit (429) otherwise.
    INBOX_AUTH_FAILURES_PER_MINUTE: '0',
    EMAIL_PROVIDER: 'smtp',
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
  });
});
afterAll(async () => {
  await ctx.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const operator = () => as(ctx.app, OPERATOR_KEY);

it('deleting an organization while inboxes and keys are created in it: each either lands before (409) or is refused (404)', async () => {
  for (let round = 0; round < 6; round++) {
    const organization = await createOrganization(ctx.app, `Racing ${round}`);
    const [deleted, ...created] = await Promise.all([
      operator().delete(`/v1/organizations/${organization.id}`),
      ...[0, 1, 2].map((i) =>
        operator().post('/v1/inboxes', { name: 'x', email_username: `race-${round}-${i}`, organization_id: organization.id }),
      ),
      operator().post('/v1/api-keys', { name: 'x', organization_id: organization.id, permissions: ['read'] }),
    ]);
    const inboxStatuses = created.slice(0, 3).map((res) => res.status);
    expect([204, 409]).toContain(deleted.status);
    for (const res of created) expect([201, 404]).toContain(res.status);
    const left = await ctx.db.inbox.count({ where: { organizationId: organization.id } });
    if (deleted.status === 204) {
      expect(inboxStatuses).toEqual([404, 404, 404]);
      expect(left).toBe(0);
      expect(await ctx.db.apiKey.count({ where: { organizationId: organization.id } })).toBe(0);
      const key = created[3]!;
      if (key.status === 201) expect((await as(ctx.app, key.body.key).get('/v1/organizations')).status).toBe(401);
    } else {
      expect(left).toBe(inboxStatuses.filter((status) => status === 201).length);
      expect(left).toBeGreaterThan(0);
    }
  }
});

it('deleting an inbox while a key sends from it: sends answer 201 or 404, and the delete waits for those recorded', async () => {
  const organization = await createOrganization(ctx.app, 'Inbox race');
  const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['send', 'manage'] });
  const inbox = await createInbox(ctx.app, key.key, { email_username: 'inbox-race' });
  const sends = Array.from({ length: 6 }, (_, i) =>
    as(ctx.app, key.key).post('/v1/messages', {
      inbox_id: inbox.id,
      to: [`inbox-race-${i}@example.com`],
      subject: 's',
      body: 'b',
    }),
  );
  const [deleted, ...answers] = await Promise.all([
    new Promise((resolve) => setTimeout(resolve, 20)).then(() => as(ctx.app, key.key).delete(`/v1/inboxes/${inbox.id}`)),
    ...sends,
  ]);
  expect(deleted.status).toBe(204);
  const statuses = answers.map((res) => res.status);
  for (const status of statuses) expect([201, 404]).toContain(status);
  const sent = statuses.filter((status) => status === 201).length;
  expect(accepted.filter((delivery) => delivery.to.startsWith('inbox-race-'))).toHaveLength(sent);
});

it('revoking a key while two replicas send with it: nothing is sent with it once the revocation has answered', async () => {
  const replica = await ctx.replica();
  try {
    const organization = await createOrganization(ctx.app, 'Key race');
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'key-race', organization_id: organization.id });
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['send'] });
    let stop = false;
    let counter = 0;
    const outcomes: { to: string; status: number; startedAt: number }[] = [];
    const sender = async (app: TestContext['app']) => {
      while (!stop) {
        const to = `key-race-${counter++}@example.com`;
        const startedAt = Date.now();
        const res = await as(app, key.key).post('/v1/messages', { inbox_id: inbox.id, to: [to], subject: 'race', body: 'b' });
        outcomes.push({ to, status: res.status, startedAt });
      }
    };
    const senders = [ctx.app, ctx.app, replica.app, replica.app].map(sender);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const revocation = await operator().delete(`/v1/api-keys/${key.id}`);
    const answeredAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 600));
    stop = true;
    await Promise.all(senders);

    expect(revocation.status).toBe(204);
    const statuses = new Set(outcomes.map((outcome) => outcome.status));
    expect([...statuses].sort()).toEqual([201, 401]);
    const deliveries = accepted.filter((delivery) => delivery.to.startsWith('key-race-'));
    // Each 201 was delivered, each delivery answered 201, and none was taken by the provider after the revocation answered.
    expect(deliveries.map((delivery) => delivery.to).sort()).toEqual(
      outcomes
        .filter((outcome) => outcome.status === 201)
        .map((outcome) => outcome.to)
        .sort(),
    );
    expect(deliveries.filter((delivery) => delivery.at > answeredAt)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.startedAt > answeredAt && outcome.status !== 401)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.startedAt > answeredAt).length).toBeGreaterThan(0);
    expect(await ctx.db.message.count({ where: { apiKeyId: key.id, status: { not: 'sent' } } })).toBe(0);
  } finally {
    await replica.close();
  }
});

it('a key revoked on one replica creates no key or webhook and redirects no webhook on another that still has it cached', async () => {
  const replica = await ctx.replica();
  try {
    const organization = await createOrganization(ctx.app, 'Revoked writer');
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read', 'manage'] });
    const hook = (
      await as(replica.app, key.key)
        .post('/v1/webhooks', { url: 'https://hooks.example.com/in', event_types: ['message.received'] })
        .expect(201)
    ).body as { id: string };
    await operator().delete(`/v1/api-keys/${key.id}`).expect(204);
    // The replica authenticates the key from its cache (for up to its cache period); the writes check the key's row.
    const attempts = [
      await as(replica.app, key.key).post('/v1/api-keys', { name: 'escape hatch', permissions: ['read'] }),
      await as(replica.app, key.key).post('/v1/webhooks', {
        url: 'https://evil.example.com/in',
        event_types: ['message.received'],
      }),
      await as(replica.app, key.key).patch(`/v1/webhooks/${hook.id}`, { url: 'https://evil.example.com/in' }),
    ];
    expect(attempts.map((res) => [res.status, res.body.error?.message])).toEqual(
      Array.from({ length: 3 }, () => [401, 'This API key has been revoked']),
    );
    expect(await ctx.db.apiKey.count({ where: { organizationId: organization.id } })).toBe(1);
    expect((await ctx.db.webhook.findMany({ where: { organizationId: organization.id } })).map((row) => row.url)).toEqual([
      'https://hooks.example.com/in',
    ]);
  } finally {
    await replica.close();
  }
});
