/**
 * Every background job of the service, by name: its payload, how often it is retried and how long
 * an attempt may run. A job is one entry here and a handler in its feature folder; queue.ts creates
 * the queues and runs the handlers from this list.
 */
import { defineJob as defineAnyJob, type JobDefinition } from '@repo/jobs';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { draftDepsOf, runDraftJob } from '../drafts/service.js';
import { summarizeThread } from '../summaries/service.js';
import { deliverDue } from '../webhooks-out/deliver.js';

const defineJob = <P extends z.ZodType>(definition: JobDefinition<Deps, P>) => defineAnyJob(definition);

export const JOBS = {
  /** Writes a thread's summary again (src/summaries); one waits per thread, so a burst of messages makes one call. */
  'summarize-thread': defineJob({
    payload: z.object({ thread_id: z.uuid() }),
    policy: 'short',
    // A vendor outage or rate limit: 30 s, 1, 2, 4, 8 min.
    retryLimit: 5,
    retryDelaySeconds: 30,
    expireInSeconds: 300,
    handle: (deps, payload) => summarizeThread(deps, payload.thread_id),
  }),
  /**
   * Attempts a webhook's due deliveries (src/webhooks-out/deliver.ts). Queued with new deliveries
   * and by the sweep when retries come due; one waits per webhook. Failed attempts are recorded on
   * the deliveries (their own retry schedule), so a job fails only when the database does.
   */
  'deliver-webhook': defineJob({
    payload: z.object({ webhook_id: z.uuid() }),
    policy: 'short',
    retryLimit: 3,
    retryDelaySeconds: 5,
    // A turn ends after about a minute, with at most one batch of attempts (the receiver timeout) past it.
    expireInSeconds: 300,
    concurrency: () => ({ perProcess: 8 }),
    handle: (deps, payload, context) => deliverDue(deps, payload.webhook_id, context.signal),
  }),
  /**
   * Sends a scheduled draft once due (src/drafts): queued with the change that schedules it, at its
   * send_at, or as the backstop of a send made at once. Sending twice is impossible (the draft's
   * Idempotency-Key); while a kill switch or cap holds it, the handler queues the next attempt.
   */
  'send-draft': defineJob({
    payload: z.object({ draft_id: z.uuid() }),
    // The provider failing, or a send of the draft still under way elsewhere: 30 s, 1, 2, 4, 8 min.
    retryLimit: 5,
    retryDelaySeconds: 30,
    expireInSeconds: 300,
    concurrency: () => ({ perProcess: 4 }),
    handle: (deps, payload) => runDraftJob(draftDepsOf(deps), payload.draft_id),
  }),
};
