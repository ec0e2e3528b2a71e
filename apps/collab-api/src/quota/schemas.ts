import { z } from 'zod';
import { queryInteger } from '@repo/http';
import { timestamp } from '../shared/schemas.js';
import { parseUsd } from './rules.js';

const money = z.string().meta({ description: 'USD as a decimal string with 6 places', example: '12.500000' });

export const quotaSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    monthly_quota_usd: money,
    daily_quota_usd: money,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'QueryQuota' });

export type QuotaResponse = z.input<typeof quotaSchema>;

export const quotaSummarySchema = z
  .object({
    quota: quotaSchema,
    usage: z.object({
      id: z.uuid(),
      tenant_id: z.uuid(),
      daily_cost_usd: money,
      monthly_cost_usd: money,
      last_reset_daily: timestamp,
      last_reset_monthly: timestamp,
      created_at: timestamp,
      updated_at: timestamp,
    }),
    daily_remaining_usd: money,
    monthly_remaining_usd: money,
    daily_percentage_used: z.number(),
    monthly_percentage_used: z.number(),
    is_daily_quota_exceeded: z.boolean(),
    is_monthly_quota_exceeded: z.boolean(),
  })
  .meta({ id: 'QuotaSummary' });

export type QuotaSummaryResponse = z.input<typeof quotaSummarySchema>;

export const costHistoryItem = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    query_id: z.uuid(),
    bytes_processed: z.number().int(),
    bytes_billed: z.number().int().meta({
      description: 'The bytes charged: those processed, with BigQuery on-demand minimums (10 MB per table read, and per query)',
    }),
    cost_usd: money,
    created_at: timestamp,
  })
  .meta({ id: 'QueryCost' });

export type CostHistoryItem = z.input<typeof costHistoryItem>;

export const costHistoryPage = z
  .object({ items: z.array(costHistoryItem), total: z.number().int(), page: z.number().int(), page_size: z.number().int() })
  .meta({ id: 'QueryCostHistory' });

export const costHistoryQuery = z.strictObject({
  page: queryInteger({ min: 1, default: 1, description: 'Page number, from 1' }),
  page_size: queryInteger({ min: 1, max: 100, default: 20, description: 'Items per page' }),
});

// A JSON number or a decimal string; at most 6 decimals, not negative.
const usdInput = z
  .union([z.string(), z.number()])
  .transform((value, ctx) => {
    const micros = parseUsd(typeof value === 'number' ? String(value) : value.trim());
    if (micros === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'Must be a non-negative amount in USD with at most 6 decimals',
        params: { type: 'decimal_parsing' },
      });
      return z.NEVER;
    }
    return micros;
  })
  .meta({ description: 'USD, as a number or a decimal string (at most 6 decimals)', example: '100.00' });

export const setQuotaBody = z.strictObject({
  tenant_id: z.uuid(),
  daily_quota_usd: usdInput,
  monthly_quota_usd: usdInput,
});

export type SetQuotaInput = z.output<typeof setQuotaBody>;
