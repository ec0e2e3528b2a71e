import { preparedQuery, uuidv7 } from '@repo/db';
import { NotFoundError, RateLimitedError } from '@repo/errors';
import type { Actor } from '../access/index.js';
import type { Config } from '../config.js';
import type pg from 'pg';
import type { Database } from '../database.js';
import { Prisma, type QueryQuota, type QueryUsage } from '../generated/prisma/client.js';
import { iso } from '../shared/schemas.js';
import {
  costMicros,
  formatUsd,
  parseUsd,
  quotaRefusal,
  quotaStatus,
  startOfUtcDay,
  startOfUtcMonth,
  type Usage,
  usageAt,
} from './rules.js';
import type { CostHistoryItem, QuotaResponse, QuotaSummaryResponse, SetQuotaInput } from './schemas.js';

type QuotaConfig = Pick<
  Config,
  'COLLAB_PRICE_PER_TIB_USD' | 'COLLAB_DEFAULT_DAILY_QUOTA_USD' | 'COLLAB_DEFAULT_MONTHLY_QUOTA_USD'
>;

const micros = (value: Prisma.Decimal) => parseUsd(value.toFixed(6))!;
const decimal = (value: bigint) => new Prisma.Decimal(formatUsd(value));

function usageOf(row: Pick<QueryUsage, 'dailyCostUsd' | 'monthlyCostUsd' | 'lastResetDaily' | 'lastResetMonthly'>): Usage {
  return {
    dailyMicros: micros(row.dailyCostUsd),
    monthlyMicros: micros(row.monthlyCostUsd),
    lastResetDaily: row.lastResetDaily,
    lastResetMonthly: row.lastResetMonthly,
  };
}

function quotaOf(row: Pick<QueryQuota, 'dailyQuotaUsd' | 'monthlyQuotaUsd'>) {
  return { dailyMicros: micros(row.dailyQuotaUsd), monthlyMicros: micros(row.monthlyQuotaUsd) };
}

/** The tenant's quota and usage rows, made with the configured defaults when missing (one prepared statement). */
async function ensureRows(client: pg.Pool | pg.PoolClient, config: QuotaConfig, tenantId: string, now: Date): Promise<void> {
  await preparedQuery(
    client,
    Prisma.sql`
      WITH quota AS (
        INSERT INTO query_quotas (id, tenant_id, daily_quota_usd, monthly_quota_usd, created_at, updated_at)
        VALUES (${uuidv7()}::uuid, ${tenantId}::uuid, ${formatUsd(parseUsd(config.COLLAB_DEFAULT_DAILY_QUOTA_USD)!)}::numeric,
                ${formatUsd(parseUsd(config.COLLAB_DEFAULT_MONTHLY_QUOTA_USD)!)}::numeric, ${now}::timestamptz, ${now}::timestamptz)
        ON CONFLICT (tenant_id) DO NOTHING)
      INSERT INTO query_usage (id, tenant_id, last_reset_daily, last_reset_monthly, created_at, updated_at)
      VALUES (${uuidv7()}::uuid, ${tenantId}::uuid, ${startOfUtcDay(now)}::timestamptz, ${startOfUtcMonth(now)}::timestamptz,
              ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (tenant_id) DO NOTHING`,
  );
}

/** A tenant's usage row and its quota, as the usage lock reads them. */
export interface UsageRow {
  daily_cost_usd: Prisma.Decimal;
  monthly_cost_usd: Prisma.Decimal;
  last_reset_daily: Date;
  last_reset_monthly: Date;
  daily_quota_usd: Prisma.Decimal;
  monthly_quota_usd: Prisma.Decimal;
}

/** A UsageRow as pg reads it in a prepared statement: numeric columns as text. */
export type UsageText = { [key in keyof UsageRow]: UsageRow[key] extends Prisma.Decimal ? string : UsageRow[key] };

export function usageRowOfText(row: UsageText): UsageRow {
  return {
    daily_cost_usd: new Prisma.Decimal(row.daily_cost_usd),
    monthly_cost_usd: new Prisma.Decimal(row.monthly_cost_usd),
    last_reset_daily: row.last_reset_daily,
    last_reset_monthly: row.last_reset_monthly,
    daily_quota_usd: new Prisma.Decimal(row.daily_quota_usd),
    monthly_quota_usd: new Prisma.Decimal(row.monthly_quota_usd),
  };
}

/** The tenant's usage row locked until the transaction of `client` ends, with its quota; none when either row is still to be made. */
async function lockedUsageRow(client: pg.PoolClient, tenantId: string): Promise<UsageRow | undefined> {
  const [row] = await preparedQuery<UsageText>(
    client,
    Prisma.sql`
      SELECT u.daily_cost_usd, u.monthly_cost_usd, u.last_reset_daily, u.last_reset_monthly, q.daily_quota_usd, q.monthly_quota_usd
        FROM query_usage u JOIN query_quotas q ON q.tenant_id = u.tenant_id
       WHERE u.tenant_id = ${tenantId}::uuid
         FOR UPDATE OF u`,
  );
  return row && usageRowOfText(row);
}

/** The usage (as of `now`) and quota of a usage row read with its quota. */
function usageAndQuota(row: UsageRow, now: Date) {
  const usage = usageOf({
    dailyCostUsd: row.daily_cost_usd,
    monthlyCostUsd: row.monthly_cost_usd,
    lastResetDaily: row.last_reset_daily,
    lastResetMonthly: row.last_reset_monthly,
  });
  return {
    usage: usageAt(usage, now),
    quota: quotaOf({ dailyQuotaUsd: row.daily_quota_usd, monthlyQuotaUsd: row.monthly_quota_usd }),
  };
}

/**
 * The tenant's usage row, locked until `tx` ends: runs and charges of one tenant take turns
 * here, so a check and the charge it allows are never interleaved with another's. One statement
 * once the rows exist (every run and charge passes here).
 */
async function lockUsage(client: pg.PoolClient, config: QuotaConfig, tenantId: string, now: Date) {
  let row = await lockedUsageRow(client, tenantId);
  if (!row) {
    await ensureRows(client, config, tenantId, now);
    row = (await lockedUsageRow(client, tenantId))!;
  }
  return usageAndQuota(row, now);
}

/** 429 with Retry-After when the tenant's daily or monthly quota is used up (checked under the usage lock). */
export async function requireQuotaLeft(
  client: pg.PoolClient,
  config: QuotaConfig,
  tenantId: string,
  now = new Date(),
): Promise<void> {
  const refusal = await quotaLeft(client, config, tenantId, now);
  if (refusal) throw new RateLimitedError(refusal.message, refusal.retryAfterSeconds);
}

/** Why the tenant may not run a query now, if it may not (under the usage lock). */
export async function quotaLeft(client: pg.PoolClient, config: QuotaConfig, tenantId: string, now = new Date()) {
  const { usage, quota } = await lockUsage(client, config, tenantId, now);
  return quotaRefusal(quotaStatus(quota, usage), now);
}

/** quotaLeft of a usage row the caller read (and locked) with its quota. */
export function quotaLeftOf(row: UsageRow, now = new Date()) {
  const { usage, quota } = usageAndQuota(row, now);
  return quotaRefusal(quotaStatus(quota, usage), now);
}

/**
 * SQL that charges the job a statement ends, as CTEs that follow the caller's CTE `ended` (an
 * UPDATE of query_jobs ... RETURNING id, tenant_id, query_id), so that ending and charging are
 * one statement: the cost of the bytes billed goes into the usage of its tenant (of the current UTC
 * day and month: an earlier day or month counts from 0, as usageAt) and into the cost history.
 * Nothing is charged when `ended` ended no job (it had ended already), so a job is charged once.
 * The usage row exists: the run that queued the job made it.
 */
export function chargeEnded(
  config: Pick<QuotaConfig, 'COLLAB_PRICE_PER_TIB_USD'>,
  usage: { bytesProcessed: bigint; bytesBilled: bigint },
  now = new Date(),
): { cost: bigint; ctes: Prisma.Sql } {
  const cost = costMicros(usage.bytesBilled, parseUsd(config.COLLAB_PRICE_PER_TIB_USD)!);
  const usd = formatUsd(cost);
  const day = startOfUtcDay(now);
  const month = startOfUtcMonth(now);
  const ctes = Prisma.sql`charged_usage AS (
      UPDATE query_usage u
         SET daily_cost_usd = CASE WHEN u.last_reset_daily < ${day}::timestamptz THEN 0 ELSE u.daily_cost_usd END + ${usd}::numeric,
             monthly_cost_usd = CASE WHEN u.last_reset_monthly < ${month}::timestamptz THEN 0 ELSE u.monthly_cost_usd END + ${usd}::numeric,
             last_reset_daily = greatest(u.last_reset_daily, ${day}::timestamptz),
             last_reset_monthly = greatest(u.last_reset_monthly, ${month}::timestamptz),
             updated_at = ${now}::timestamptz
        FROM ended
       WHERE u.tenant_id = ended.tenant_id
   RETURNING u.tenant_id),
    charged_cost AS (
      INSERT INTO query_costs (id, tenant_id, query_id, query_job_id, bytes_processed, bytes_billed, cost_usd, created_at)
      SELECT ${uuidv7(now.getTime())}::uuid, ended.tenant_id, ended.query_id, ended.id, ${usage.bytesProcessed}::bigint, ${usage.bytesBilled}::bigint,
             ${usd}::numeric, ${now}::timestamptz
        FROM ended JOIN charged_usage ON charged_usage.tenant_id = ended.tenant_id
   RETURNING id)`;
  return { cost, ctes };
}

function toQuotaResponse(row: QueryQuota): QuotaResponse {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    monthly_quota_usd: formatUsd(micros(row.monthlyQuotaUsd)),
    daily_quota_usd: formatUsd(micros(row.dailyQuotaUsd)),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The actor's tenant's quota and its usage as of now (a new UTC day or month counts from 0). */
export async function quotaSummary(
  db: Database,
  config: QuotaConfig,
  actor: Actor,
  now = new Date(),
): Promise<QuotaSummaryResponse> {
  await ensureRows(db.pool, config, actor.tenantId, now);
  const [usageRow, quotaRow] = await Promise.all([
    db.queryUsage.findUniqueOrThrow({ where: { tenantId: actor.tenantId } }),
    db.queryQuota.findUniqueOrThrow({ where: { tenantId: actor.tenantId } }),
  ]);
  const usage = usageAt(usageOf(usageRow), now);
  const status = quotaStatus(quotaOf(quotaRow), usage);
  return {
    quota: toQuotaResponse(quotaRow),
    usage: {
      id: usageRow.id,
      tenant_id: usageRow.tenantId,
      daily_cost_usd: formatUsd(usage.dailyMicros),
      monthly_cost_usd: formatUsd(usage.monthlyMicros),
      last_reset_daily: iso(usage.lastResetDaily),
      last_reset_monthly: iso(usage.lastResetMonthly),
      created_at: iso(usageRow.createdAt),
      updated_at: iso(usageRow.updatedAt),
    },
    daily_remaining_usd: formatUsd(status.dailyRemainingMicros),
    monthly_remaining_usd: formatUsd(status.monthlyRemainingMicros),
    daily_percentage_used: status.dailyPercentageUsed,
    monthly_percentage_used: status.monthlyPercentageUsed,
    is_daily_quota_exceeded: status.dailyExceeded,
    is_monthly_quota_exceeded: status.monthlyExceeded,
  };
}

/** The actor's tenant's job costs, newest first. */
export async function costHistory(
  db: Database,
  actor: Actor,
  page: { page: number; page_size: number },
): Promise<{ items: CostHistoryItem[]; total: number; page: number; page_size: number }> {
  const where = { tenantId: actor.tenantId };
  const [rows, total] = await Promise.all([
    db.queryCost.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (page.page - 1) * page.page_size,
      take: page.page_size,
    }),
    db.queryCost.count({ where }),
  ]);
  return {
    items: rows.map((row) => ({
      id: row.id,
      tenant_id: row.tenantId,
      query_id: row.queryId,
      bytes_processed: Number(row.bytesProcessed),
      bytes_billed: Number(row.bytesBilled),
      cost_usd: formatUsd(micros(row.costUsd)),
      created_at: iso(row.createdAt),
    })),
    total,
    page: page.page,
    page_size: page.page_size,
  };
}

/** A platform operator sets a live tenant's quotas (404 for a tenant that does not exist or is deleted). */
export async function setQuota(
  db: Database,
  config: QuotaConfig,
  input: SetQuotaInput,
  now = new Date(),
): Promise<QuotaResponse> {
  const tenant = await db.tenant.findFirst({ where: { id: input.tenant_id, archivedAt: null } });
  if (!tenant) throw new NotFoundError('Tenant not found');
  await ensureRows(db.pool, config, tenant.id, now);
  const row = await db.queryQuota.update({
    where: { tenantId: tenant.id },
    data: { dailyQuotaUsd: decimal(input.daily_quota_usd), monthlyQuotaUsd: decimal(input.monthly_quota_usd) },
  });
  return toQuotaResponse(row);
}
