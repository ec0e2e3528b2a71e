/** Query job states (contract.md) and what the worker and the API may do in each, pure. */
export const QUERY_JOB_STATUSES = ['PENDING', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED'] as const;
export type QueryJobStatus = (typeof QUERY_JOB_STATUSES)[number];

/** The worker runs a PENDING job, and a RUNNING one again when a retry follows a stopped attempt. */
export function workerMayRun(status: QueryJobStatus): boolean {
  return status === 'PENDING' || status === 'RUNNING';
}

/** DONE, FAILED or CANCELLED: nothing more happens to the job (a request waiting for it answers). */
export function hasEnded(status: QueryJobStatus): boolean {
  return !workerMayRun(status);
}

/** A CANCELLED job's error_result, as BigQuery marks a cancelled job (reason `stopped`). */
export const CANCELLED_BY_REQUEST = { reason: 'stopped', message: 'The job was cancelled' };

/**
 * What a cancel does to a job in `status`: a PENDING job is CANCELLED at once, a RUNNING one is
 * asked to stop (its worker ends it CANCELLED), a CANCELLED one stays so (the same answer again);
 * an ended one cannot be cancelled (the message says why).
 */
export function cancelEffect(status: QueryJobStatus): 'cancel' | 'ask-worker' | 'already-cancelled' | { conflict: string } {
  switch (status) {
    case 'PENDING':
      return 'cancel';
    case 'RUNNING':
      return 'ask-worker';
    case 'CANCELLED':
      return 'already-cancelled';
    case 'DONE':
    case 'FAILED':
      return { conflict: `The job has already ended: it is ${status}` };
  }
}

/** Results are read, and exports made, from a DONE job only; the message says why not otherwise. */
export function resultsUnavailable(status: QueryJobStatus): string | undefined {
  switch (status) {
    case 'DONE':
      return undefined;
    case 'PENDING':
    case 'RUNNING':
      return `The job is ${status}: its results are ready once it is DONE`;
    case 'FAILED':
    case 'CANCELLED':
      return `The job is ${status}: it has no results`;
  }
}

/** When the result of a job that ended DONE at `ended` expires: `ttlDays` whole days later. */
export function resultsExpireAt(ended: Date, ttlDays: number): Date {
  return new Date(ended.getTime() + ttlDays * 86_400_000);
}

/** Why a DONE job's stored result is gone for good (410), once `expireAt` has passed; undefined while it is kept. */
export function resultsGone(expireAt: Date | null, now: Date): string | undefined {
  if (expireAt === null || now < expireAt) return undefined;
  return `The job's results expired at ${expireAt.toISOString()} and were deleted: run the query again`;
}

/** A result page's bounds: rows `offset` to `offset + limit`, and how many pages there are. */
export function pageBounds(
  totalRows: number,
  page: number,
  pageSize: number,
): { offset: number; limit: number; totalPages: number } {
  const totalPages = Math.ceil(totalRows / pageSize);
  const offset = (page - 1) * pageSize;
  return { offset, limit: Math.max(0, Math.min(pageSize, totalRows - offset)), totalPages };
}
