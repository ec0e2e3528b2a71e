/**
 * The service's background jobs (catalog.ts) on @repo/jobs: pg-boss in the service's own Postgres
 * (the embedded one too). Messages queue them in the transaction that records them; server.ts runs
 * them in the API process.
 */
import { createJobQueue as createQueue, type JobQueue as Queue, type JobQueueOptions } from '@repo/jobs';
import type { Deps } from '../deps.js';
import { JOBS } from './catalog.js';

export type JobQueue = Queue<Deps, typeof JOBS>;

export function createJobQueue(options: Omit<JobQueueOptions, 'applicationName'>): JobQueue {
  return createQueue<Deps, typeof JOBS>(JOBS, { ...options, applicationName: 'inbox-api jobs' });
}
