/**
 * Every background job of the service, by name: its payload, how often it is retried and how
 * long an attempt may run. A job is one entry here and a handler in its feature folder; queue.ts
 * creates the queues and runs the handlers from this list.
 */
import { defineJob as defineAnyJob, type JobDefinition } from '@repo/jobs';
import { z } from 'zod';
import { approvalMailPayload, sendApprovalMail } from '../approvals/mail.js';
import type { Deps } from '../deps.js';
import { exportGaveUp, runExportJob } from '../exports/job.js';
import { loadJobGaveUp, runLoadJob } from '../load-jobs/job.js';
import { queryJobGaveUp, runQueryJob } from '../query-jobs/job.js';

export type { JobContext } from '@repo/jobs';

const defineJob = <P extends z.ZodType>(definition: JobDefinition<Deps, P>) => defineAnyJob(definition);

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
  /** One notification e-mail about an approval request (src/approvals/mail.ts); a failing mail server is retried for about two hours. */
  'approval-mail': defineJob({
    payload: approvalMailPayload,
    retryLimit: 8,
    retryDelaySeconds: 30,
    expireInSeconds: 300,
    handle: (deps, payload) => sendApprovalMail(deps, payload),
  }),
  /** Runs a query job and stores its result (src/query-jobs); sent with its tenant as group and its round's priority (scheduling.ts). */
  'query-job': defineJob({
    payload: z.object({ query_job_id: z.uuid() }),
    retryLimit: 2,
    retryDelaySeconds: 5,
    expireInSeconds: 6 * 3600,
    concurrency: (deps) => ({
      perProcess: deps.config.COLLAB_QUERY_CONCURRENCY,
      perGroup: deps.config.COLLAB_QUERY_CONCURRENCY_PER_TENANT,
    }),
    handle: (deps, payload, context) => runQueryJob(deps, payload.query_job_id, context),
    gaveUp: (deps, payload) => queryJobGaveUp(deps, payload.query_job_id),
  }),
  /** Writes a query job's result to a file in object storage (src/exports). */
  'query-export': defineJob({
    payload: z.object({ export_id: z.uuid() }),
    retryLimit: 2,
    retryDelaySeconds: 5,
    expireInSeconds: 3600,
    handle: (deps, payload) => runExportJob(deps, payload.export_id),
    gaveUp: (deps, payload) => exportGaveUp(deps, payload.export_id),
  }),
};
