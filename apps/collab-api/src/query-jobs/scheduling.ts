/**
 * Fair turns between tenants. Every waiting (PENDING) query job has a round: a tenant's first
 * waiting job joins the lowest round still waiting, each further one the round after its
 * previous one. The queue takes lower rounds first (pg-boss priority = -round), and within a round
 * the older job first; so a tenant with nothing waiting goes after at most one waiting job of each
 * other tenant, however many those have queued. Beside it, a worker runs at most
 * COLLAB_QUERY_CONCURRENCY_PER_TENANT jobs of one tenant (the queue's group limit, by tenant), so
 * that the other places are there for other tenants' jobs.
 */
import type { Transaction } from '../database.js';

/** The round of a tenant's new job, from the lowest round waiting (any tenant's) and the tenant's own last one. */
export function nextRound(waiting: { lowest: number | null; tenantsLast: number | null }): number {
  const lowest = waiting.lowest ?? 0;
  return waiting.tenantsLast === null ? lowest : Math.max(lowest, waiting.tenantsLast + 1);
}

/** The queue's priority of a job of `round`: higher is taken first. */
export function queuePriority(round: number): number {
  return -round;
}

/** The rounds waiting now (read in the run's transaction). */
export async function waitingRounds(
  tx: Transaction,
  tenantId: string,
): Promise<{ lowest: number | null; tenantsLast: number | null }> {
  const [rounds] = await tx.$queryRaw<{ lowest: number | null; tenants_last: number | null }[]>`
    SELECT (SELECT min(queue_round) FROM query_jobs WHERE status = 'PENDING') AS lowest,
           (SELECT max(queue_round) FROM query_jobs WHERE status = 'PENDING' AND tenant_id = ${tenantId}::uuid) AS tenants_last`;
  return { lowest: rounds?.lowest ?? null, tenantsLast: rounds?.tenants_last ?? null };
}
