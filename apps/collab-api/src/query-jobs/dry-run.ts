import { BadRequestError, ForbiddenError } from '@repo/errors';
import type { Actor } from '../access/index.js';
import { appliedRules, referencedTables } from '../access-log/record.js';
import { QueryFailure } from '../adapters/warehouse/query/index.js';
import { costMicros, formatUsd, parseUsd } from '../quota/rules.js';
import { readableCatalog } from './readable.js';
import type { DryRunResponse } from './schemas.js';
import { checkTimeout, type QueryJobDeps, savedQueryToRun } from './service.js';

/** How a dry run answers a query a run would refuse: the job's reason as a status (a rule or an unreadable table: 403), its message as is. */
export function dryRunRefusal(failure: QueryFailure): Error {
  return failure.reason === 'accessDenied' ? new ForbiddenError(failure.message) : new BadRequestError(failure.message);
}

/**
 * A dry run of a saved query: checked as its run would be (the same refusals, answered at once),
 * and what it would read and cost, which tables it references and the rules of other tenants'
 * tables it would obey. No job, no charge.
 */
export async function dryRunQuery(
  deps: Pick<QueryJobDeps, 'db' | 'config' | 'queryEngine'>,
  actor: Actor,
  input: { query_id: string; query_text: string; timeout_seconds?: number },
): Promise<DryRunResponse> {
  checkTimeout(deps.config, input.timeout_seconds);
  const query = await savedQueryToRun(deps.db, actor, input);
  const catalog = await readableCatalog(deps.db, { projectId: query.projectId, tenantId: actor.tenantId });
  const estimate = await deps.queryEngine
    .dryRun({ sql: query.queryText, catalog, signal: AbortSignal.timeout(deps.config.COLLAB_QUERY_TIMEOUT_SECONDS * 1000) })
    .catch((error: unknown) => {
      throw error instanceof QueryFailure ? dryRunRefusal(error) : error;
    });
  return {
    total_bytes_processed: estimate.bytesProcessed,
    total_bytes_billed: estimate.bytesBilled,
    cost_usd: formatUsd(costMicros(BigInt(estimate.bytesBilled), parseUsd(deps.config.COLLAB_PRICE_PER_TIB_USD)!)),
    referenced_tables: referencedTables(catalog, estimate.referenced),
    rules: appliedRules(catalog, estimate.referenced),
  };
}
