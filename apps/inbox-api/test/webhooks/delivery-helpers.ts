import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { createTestContext, type TestContext } from '../context.js';
import { startProvider } from '../mail/helpers.js';

/**
 * Two organizations, each with an inbox and a key that sends, on an app whose transport is a
 * provider stand-in on 127.0.0.1 (`answer`), configured by `env` (EMAIL_PROVIDER and the
 * provider's settings, given the stand-in's URL). What the delivery-event tests share.
 */
export async function deliverySetup(
  answer: Parameters<typeof startProvider>[0],
  env: (providerUrl: string) => Record<string, string>,
) {
  const provider = await startProvider(answer);
  const ctx: TestContext = await createTestContext({
    INBOX_API_KEYS: OPERATOR_KEY,
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LIMIT_PER_HOUR: '0',
    ...env(provider.url),
  });
  const orgs = [];
  for (const name of ['a', 'b']) {
    const organization = await createOrganization(ctx.app, `Delivery ${name}`);
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, {
      email_username: `sender-${name}`,
      organization_id: organization.id,
    });
    const key = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read', 'send'] })).key;
    orgs.push({ organization, inbox, key });
  }
  const [a, b] = orgs as [(typeof orgs)[0], (typeof orgs)[0]];

  /** Sends a message from the organization's inbox; its id. */
  const send = async (org: typeof a, to = 'jane@example.com') =>
    (
      (
        await as(ctx.app, org.key)
          .post('/v1/messages', { inbox_id: org.inbox.id, to: [to], subject: 'Delivery test', body: 'Hello' })
          .expect(201)
      ).body as { id: string }
    ).id;

  /** The message as the organization's key reads it. */
  const message = async (org: typeof a, id: string) =>
    (await as(ctx.app, org.key).get(`/v1/messages/${id}`).expect(200)).body as {
      delivery_status: string | null;
      delivery_detail: Record<string, unknown> | null;
    };

  /** The organization's events of message `id` as its key lists them, of the delivery types. */
  const deliveryEvents = async (org: typeof a, id?: string) =>
    (
      (
        await as(ctx.app, org.key)
          .get('/v1/events?types=message.delivered,message.bounced,message.complained,message.failed&limit=100')
          .expect(200)
      ).body.items as { type: string; message_id: string; organization_id: string; data: Record<string, unknown> }[]
    ).filter((event) => id === undefined || event.message_id === id);

  return {
    ctx,
    provider,
    a,
    b,
    send,
    message,
    deliveryEvents,
    async close() {
      await ctx.close();
      await provider.close();
    },
  };
}
