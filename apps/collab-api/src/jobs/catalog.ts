/**
 * Every background job of the service, by name: its payload, how often it is retried and how
 * long an attempt may run. A job is one entry here and a handler in its feature folder; queue.ts
 * creates the queues and runs the handlers from this list.
 */
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { loadJobGaveUp, runLoadJob } from '../load-jobs/job.js';

/** What a handler gets besides its payload. */
export interface JobContext {
  /** Aborted when the worker stops (and the wait for the handler ends) or the job was taken from it: stop, and leave it to a retry. */
  signal: AbortSignal;
  /** From 0; the attempt that a retry is. */
  attempt: number;
}

export interface JobDefinition<P extends z.ZodType = z.ZodType> {
  payload: P;
  /** Attempts after the first, for a handler that threw or a process that stopped while running it. */
  retryLimit: number;
  /** Before the first retry; doubles for each next one. */
  retryDelaySeconds: number;
  /** How long an attempt may run before it is failed (and retried). */
  expireInSeconds: number;
  handle(deps: Deps, payload: z.output<P>, context: JobContext): Promise<void>;
  /** After the last attempt failed (or its process stopped): leaves the records as they must be then. */
  gaveUp?(deps: Deps, payload: z.output<P>, reason: string): Promise<void>;
}

const defineJob = <P extends z.ZodType>(definition: JobDefinition<P>) => definition;

export const JOBS = {
  /** Loads a file into a table (src/load-jobs). */
  'load-job': defineJob({
    payload: z.object({ load_job_id: z.uuid() }),
    retryLimit: 2,
    retryDelaySeconds: 5,
    // BigQuery may take this long for a large file; a stopped process is noticed by its heartbeat much sooner.
    expireInSeconds: 6 * 3600,
    handle: (deps, payload, context) => runLoadJob(deps, payload.load_job_id, context),
    gaveUp: (deps, payload, reason) => loadJobGaveUp(deps, payload.load_job_id, reason),
  }),
};

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = z.input<(typeof JOBS)[N]['payload']>;
