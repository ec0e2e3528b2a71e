/**
 * Requests that wait for a query job to end (GET .../results?timeout_ms=, as BigQuery's
 * getQueryResults waits with timeoutMs), so that a client asks once instead of polling. A job
 * whose worker runs in this process (always, with DuckDB) wakes its waiters as soon as the worker
 * is done with it, handing them the row it wrote when it ended the job DONE (no read again), with
 * the result's first page when it read it for them (job.ts); one whose worker runs in another
 * process is seen when the waiter reads its row again, every READ_AGAIN_MS.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** How often a waiting request reads the job again, for a job that ends in another process. */
const READ_AGAIN_MS = 250;

export class QueryJobEnds {
  private readonly waiting = new Map<string, Set<(row: unknown) => void>>();

  /**
   * Wakes the requests waiting for `jobId`: this process's worker is done with it. With `row`, the
   * job's row as its ending transaction wrote it (committed); without, they read it again.
   */
  ended(jobId: string, row?: unknown): void {
    for (const wake of this.waiting.get(jobId) ?? []) wake(row);
  }

  /** How many requests in this process wait for `jobId` now. */
  waiters(jobId: string): number {
    return this.waiting.get(jobId)?.size ?? 0;
  }

  /**
   * Reads the job until `done` says it ended or `timeoutMs` passed; answers the last read. A row
   * handed over by `ended` is taken instead of reading again when `handed` accepts it.
   */
  async until<T>(
    jobId: string,
    timeoutMs: number,
    read: () => Promise<T>,
    done: (value: T) => boolean,
    handed: (row: unknown) => T | undefined = () => undefined,
  ): Promise<T> {
    let value: T | undefined;
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      // Listening before reading: an end between the read and the wait is not missed.
      const stop = new AbortController();
      const woken = this.wakeUp(jobId, stop.signal);
      try {
        value = await read();
        const left = deadline - performance.now();
        if (done(value) || left <= 0) return value;
        const row = await Promise.race([woken, sleep(Math.min(left, READ_AGAIN_MS), undefined, { signal: stop.signal })]);
        const given = row === undefined ? undefined : handed(row);
        if (given !== undefined && done(given)) return given;
      } finally {
        stop.abort();
      }
    }
  }

  /** Resolves when `jobId` ends in this process; stops listening (and never resolves) once `signal` aborts. */
  private wakeUp(jobId: string, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve) => {
      const wake = (row: unknown) => resolve(row);
      const waiters = this.waiting.get(jobId) ?? new Set();
      waiters.add(wake);
      this.waiting.set(jobId, waiters);
      signal.addEventListener(
        'abort',
        () => {
          waiters.delete(wake);
          if (waiters.size === 0) this.waiting.delete(jobId);
        },
        { once: true },
      );
    });
  }
}
