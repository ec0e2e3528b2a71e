/**
 * Fair turns between tenants. Every waiting (PENDING) query job has a round: a tenant's first
 * waiting job joins the lowest round still waiting, each further one the round after its
 * previous one. The queue takes lower rounds first (pg-boss priority = -round), and within a round
 * the older job first; so a tenant with nothing waiting goes after at most one waiting job of each
 * other tenant, however many those have queued. Beside it, a worker runs at most
 * COLLAB_QUERY_CONCURRENCY_PER_TENANT jobs of one tenant (the queue's group limit, by tenant), so
 * that the other places are there for other tenants' jobs.
 */
import { Prisma } from '../generated/prisma/client.js';

/**
 * The round of a tenant's new job, as an expression for the statement that inserts it (read after
 * the tenant's usage lock, so that a tenant's concurrent runs see each other's jobs): the lowest
 * round waiting (any tenant's, 0 when none), or the one after the tenant's own last, if later.
 */
export function nextRoundSql(tenantId: string): Prisma.Sql {
  // greatest() skips nulls: a tenant with nothing waiting joins the lowest round.
  return Prisma.sql`greatest(
      coalesce((SELECT min(queue_round) FROM query_jobs WHERE status = 'PENDING'), 0),
      (SELECT max(queue_round) FROM query_jobs WHERE status = 'PENDING' AND tenant_id = ${tenantId}::uuid) + 1)`;
}

/** The queue's priority of a job of `round`: higher is taken first. */
export function queuePriority(round: number): number {
  return -round;
}
