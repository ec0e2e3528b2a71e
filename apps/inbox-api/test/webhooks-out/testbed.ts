import { startWebhookDispatcher, type WebhookDispatcher } from '../../src/webhooks-out/dispatch.js';
import { as, OPERATOR_KEY } from '../api-keys/helpers.js';
import { createTestContext, type TestContext } from '../context.js';
import { type Receiver, startReceiver } from './receiver.js';

export interface WebhookTestbed {
  ctx: TestContext;
  receiver: Receiver;
  dispatcher: WebhookDispatcher;
  close(): Promise<void>;
}

/**
 * A service with webhooks out (receivers on 127.0.0.1 allowed, no rate or send limits, OPERATOR_KEY
 * an operator), a receiver (receiver.ts) and the fan-out running every `sweepSeconds`; `settings`
 * add to the context's. With `jobs`, the `deliver-webhook` jobs run too (retries, manual retries).
 */
export async function startWebhookTestbed(
  settings: Record<string, string>,
  options: { sweepSeconds: number; jobs: boolean },
): Promise<WebhookTestbed> {
  const [ctx, receiver] = await Promise.all([
    createTestContext({
      INBOX_API_KEYS: OPERATOR_KEY,
      INBOX_RATE_LIMIT_PER_MINUTE: '0',
      INBOX_SEND_LIMIT_PER_HOUR: '0',
      INBOX_WEBHOOK_ALLOW_PRIVATE: 'true',
      INBOX_WEBHOOK_SWEEP_SECONDS: String(options.sweepSeconds),
      ...settings,
    }),
    startReceiver(),
  ]);
  if (options.jobs) await ctx.deps.jobs.work(ctx.deps);
  const dispatcher = startWebhookDispatcher(ctx.deps, { sweepSeconds: options.sweepSeconds });
  return {
    ctx,
    receiver,
    dispatcher,
    async close() {
      await dispatcher.stop();
      await receiver.close();
      await ctx.close();
    },
  };
}

/** A delivery as GET /v1/webhooks/{webhook_id}/deliveries lists it (the fields the tests read). */
export interface DeliveryView {
  id: string;
  event_id: number;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  attempt_log: { status_code: number | null; error: string | null }[];
}

/** Polls a webhook's deliveries (as the operator) until `done` holds: they change in the background. */
export async function deliveriesWhen(
  ctx: TestContext,
  webhookId: string,
  done: (items: DeliveryView[]) => boolean,
  timeoutMs = 30_000,
): Promise<DeliveryView[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = (await as(ctx.app, OPERATOR_KEY).get(`/v1/webhooks/${webhookId}/deliveries`).expect(200)).body
      .items as DeliveryView[];
    if (done(items)) return items;
    if (Date.now() > deadline) throw new Error(`deliveries never settled: ${JSON.stringify(items)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
