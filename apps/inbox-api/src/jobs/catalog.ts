/**
 * Every background job of the service, by name: its payload, how often it is retried and how long
 * an attempt may run. A job is one entry here and a handler in its feature folder; queue.ts creates
 * the queues and runs the handlers from this list.
 */
import { defineJob as defineAnyJob, type JobDefinition } from '@repo/jobs';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { summarizeThread } from '../summaries/service.js';

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
};
