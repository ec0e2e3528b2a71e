import type { Logger } from '@repo/http';
import { type Periodic, startPeriodic } from '@repo/jobs';
import type { Deps } from './deps.js';
import { removeExpiredEvents } from './events/log.js';
import { removeInbox } from './inboxes/service.js';
import { removeAbandonedObjects } from './messages/attachments.js';
import { resolveInterruptedSends } from './messages/interrupted-sends.js';
import { removeExpiredWebhookTokens } from './webhooks/replay.js';

export interface ReconcileReport {
  /** Sends resolved as sent or failed. */
  sends: number;
  /** Stored objects that no record came to refer to. */
  objects: number;
  /** Inboxes whose deletion was finished. */
  inboxes: number;
  /** Temporary files of interrupted writes. */
  partialWrites: number;
  /** Mailgun webhook tokens past their window. */
  webhookTokens: number;
  /** Events older than INBOX_EVENT_RETENTION_DAYS. */
  events: number;
}

type ReconcilerDeps = Pick<Deps, 'db' | 'storage' | 'mailer' | 'logger' | 'jobs' | 'crashPoint' | 'config'> & {
  leaseSeconds: number;
};

/**
 * Puts right what a crash (or kill) interrupted, all of it safe to run on several replicas at
 * once and again after a crash of its own: sends still `sending` past their lease, objects
 * written for records that were never committed, inbox deletions that did not finish, and
 * temporary files of writes cut short; and it forgets Mailgun tokens that can no longer be replayed and events past their retention. Anything younger than a lease may still be under way and
 * is left alone.
 */
export async function reconcile(deps: ReconcilerDeps): Promise<ReconcileReport> {
  const sends = await resolveInterruptedSends(deps);
  const objects = await removeAbandonedObjects(deps);
  const inboxes = await finishInboxDeletions(deps);
  const partialWrites = await deps.storage.sweepPartialWrites(new Date(Date.now() - deps.leaseSeconds * 1000));
  const webhookTokens = await removeExpiredWebhookTokens(deps.db);
  const events = await removeExpiredEvents(deps.db, deps.config.INBOX_EVENT_RETENTION_DAYS);
  return { sends, objects, inboxes, partialWrites, webhookTokens, events };
}

async function finishInboxDeletions(deps: ReconcilerDeps): Promise<number> {
  const pending = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM inboxes WHERE deleted_at < now() - make_interval(secs => ${deps.leaseSeconds}) LIMIT 100`;
  for (const { id } of pending) await removeInbox(deps, id);
  return pending.length;
}

/**
 * Runs reconcile now and then every `intervalSeconds` (never two rounds at once); 0: once. A
 * failed round is logged, and the next one tries again.
 */
export function startReconciler(deps: ReconcilerDeps, options: { intervalSeconds: number }): Periodic {
  return startPeriodic(async () => logReport(deps.logger, await reconcile(deps)), {
    intervalSeconds: options.intervalSeconds,
    onError: (error) => deps.logger.error({ err: error }, 'reconciliation failed'),
  });
}

function logReport(logger: Logger, report: ReconcileReport): void {
  if (Object.values(report).some((count) => count > 0)) logger.info(report, 'reconciled what an interruption left');
}
