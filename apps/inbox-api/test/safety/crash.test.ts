/**
 * kill -9 around approval and the send it leads to, then a restart on the same database and data
 * folder: the approved draft is sent exactly once (never twice, never lost). The service runs as
 * its own process (src/server.ts, with its job worker and reconciler) and kills itself at the named
 * step (TEST_CRASH_POINT); the transport is `local`, whose deliveries land in another inbox here.
 */
import { until } from '../context.js';
import { call, crashTestService } from '../crash-service.js';

jest.setTimeout(240_000);

const crash = crashTestService({
  label: 'inbox_draft_crash',
  domain: 'crash.test',
  // Short: the restarted service takes the dead one's send for interrupted, and its draft's backstop job runs, at once.
  env: { INBOX_SEND_LEASE_SECONDS: '1', INBOX_RECONCILE_INTERVAL_SECONDS: '1' },
});
const { start, crashDuring } = crash;

/** The few fields of the answers read here. */
interface Answer {
  id: string;
  email_address: string;
  draft: { id: string };
}

describe.each(['draft:approved', 'send:recorded', 'send:transport-done', 'draft:sent'])(
  'kill -9 at %s after an approval',
  (point) => {
    it('sends the approved draft exactly once after a restart', async () => {
      const tag = point.replace(/\W/g, '-');
      const setup = await start();
      const sender = (await call<Answer>(setup.url, 'POST', '/v1/inboxes', { name: 's', email_username: `s-${tag}` })).body!;
      const recipient = (await call<Answer>(setup.url, 'POST', '/v1/inboxes', { name: 'r', email_username: `r-${tag}` })).body!;
      expect((await call<Answer>(setup.url, 'PATCH', `/v1/inboxes/${sender.id}`, { send_policy: 'approval' })).status).toBe(200);
      const held = await call<Answer>(setup.url, 'POST', '/v1/messages', {
        inbox_id: sender.id,
        to: [recipient.email_address],
        subject: `Approved before ${point}`,
        body: 'Hello',
      });
      expect(held.status).toBe(202);
      const draftId = held.body!.draft.id;
      await setup.stop();

      await crashDuring(point, (baseUrl) => call(baseUrl, 'POST', `/v1/drafts/${draftId}/approve`));

      const restarted = await start();
      try {
        const draft = await until(
          () => crash.db.draft.findUniqueOrThrow({ where: { id: draftId } }),
          (row) => row.status === 'sent',
        );
        expect(draft.status).toBe('sent');
        const delivered = await until(
          () => crash.db.message.count({ where: { inboxId: recipient.id, direction: 'inbound' } }),
          (count) => count >= 1,
        );
        expect(delivered).toBe(1);
        // Whatever the crash left (a send marked failed, say), exactly one went out, and the draft names it.
        const sent = await crash.db.message.findMany({ where: { inboxId: sender.id, direction: 'outbound', status: 'sent' } });
        expect(sent.map((message) => message.id)).toEqual([draft.messageId]);
        expect(await crash.db.idempotencyKey.count({ where: { completedAt: null } })).toBe(0);
        // Approving again changes nothing.
        expect((await call(restarted.url, 'POST', `/v1/drafts/${draftId}/approve`)).status).toBe(409);
        await new Promise((resolve) => setTimeout(resolve, 3000));
        expect(await crash.db.message.count({ where: { inboxId: recipient.id, direction: 'inbound' } })).toBe(1);
        expect(await crash.db.event.count({ where: { type: 'draft.sent', data: { path: ['id'], equals: draftId } } })).toBe(1);
      } finally {
        await restarted.stop();
      }
    });
  },
);
