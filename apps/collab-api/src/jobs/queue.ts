/**
 * The service's background jobs (catalog.ts) on @repo/jobs: pg-boss in the service's own Postgres.
 * The API queues jobs, in the transaction that records what they are for; workers run them (see
 * worker.ts).
 */
import { createJobQueue as createQueue, type JobQueue as Queue, type JobQueueOptions } from '@repo/jobs';
import type { Deps } from '../deps.js';
import { JOBS } from './catalog.js';

export type JobQueue = Queue<Deps, typeof JOBS>;

export function createJobQueue(options: Omit<JobQueueOptions, 'applicationName'>): JobQueue {
  return createQueue<Deps, typeof JOBS>(JOBS, { ...options, applicationName: 'collab-api jobs' });
}
