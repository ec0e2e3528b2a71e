/**
 * The process's memory budget: how much more memory it may take than it had at start.
 *
 * DuckDB runs in this process, and its memory_limit bounds only its buffer pool (joins, sorts,
 * aggregates, which spill or fail at the limit). The values a query computes are allocated
 * outside it: `SELECT count(*) FROM (SELECT unnest(range(100000000)))` grew a process past 9 GB,
 * and DuckDB's interrupt is not heard while such a value is built. So the process caps its own
 * data segment (RLIMIT_DATA: the private memory it has mapped writable, i.e. its heaps, DuckDB's
 * allocations and thread stacks) at its size at start plus the budget, with util-linux's prlimit.
 * An allocation past the cap fails: DuckDB's fails its query ("Out of Memory Error", the job fails
 * `resourcesExceeded`) and the process goes on. An allocation of Node's own failing there would end
 * the process, which is why the budget sits far above what the API itself takes. allocator.ts has
 * DuckDB give freed memory back, so that the cap counts what DuckDB holds, not the most it held.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * A list built from constants costs DuckDB some 100 bytes a value while it plans the query,
 * where nothing can stop it (query/limits.ts): a tenth of the budget goes to one.
 */
export function maxConstantListElements(budgetMb: number): number {
  return budgetMb * 1024;
}

/** The process's data segment (VmData of /proc/self/status), in bytes. */
export async function dataSegmentBytes(pid: number | 'self' = 'self'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kilobytes = /^VmData:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kilobytes === undefined) throw new Error(`no VmData in /proc/${pid}/status`);
  return Number(kilobytes) * 1024;
}

/**
 * Caps this process's data segment at its present size plus `budgetMb` (call it once the process
 * has started what it keeps: DuckDB, its threads, the database pools). Where that cannot be done
 * (no /proc, no prlimit), says so and leaves the process uncapped.
 */
export async function applyMemoryBudget(options: {
  budgetMb: number;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
}): Promise<void> {
  try {
    const atStart = await dataSegmentBytes();
    const limit = atStart + options.budgetMb * 2 ** 20;
    // Only the soft limit: it is the one enforced, and the process could not raise a hard one again.
    await promisify(execFile)('prlimit', [`--pid=${process.pid}`, `--data=${limit}:`]);
    options.logger.info(
      { dataSegmentMb: Math.round(atStart / 2 ** 20), limitMb: Math.round(limit / 2 ** 20), budgetMb: options.budgetMb },
      'memory budget: the data segment is capped at its size at start plus COLLAB_MEMORY_BUDGET_MB',
    );
  } catch (error) {
    options.logger.warn(
      { err: error },
      'the memory budget is not enforced (it needs Linux and util-linux prlimit): a query can grow this process without bound',
    );
  }
}
