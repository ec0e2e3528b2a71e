import { setting } from '@repo/config';
import type { z } from 'zod';
import { parseUsd } from './rules.js';

/** An amount in USD with at most 6 decimals. */
function usd() {
  const expects = 'an amount in USD with at most 6 decimals, e.g. 6.25';
  return setting
    .string()
    .refine((value) => parseUsd(value) !== undefined, { message: `must be ${expects}` })
    .meta({ expects });
}

/** Query costs and quotas: environment variables to spread into the app's configuration schema. */
export function quotaSettings() {
  return {
    COLLAB_PRICE_PER_TIB_USD: usd()
      .default('6.25')
      .describe(
        'Price of a query in USD per TiB billed: a job costs total_bytes_billed / 2^40 × this (the bytes processed, with BigQuery on-demand minimums: 10 MB per table read and per query).',
      ),
    COLLAB_DEFAULT_DAILY_QUOTA_USD: usd()
      .default('50')
      .describe(
        "A tenant's daily query cost quota in USD until a platform operator sets another (PUT /api/v1/quota). Days are UTC.",
      ),
    COLLAB_DEFAULT_MONTHLY_QUOTA_USD: usd()
      .default('1000')
      .describe("A tenant's monthly query cost quota in USD until a platform operator sets another. Months are UTC."),
  };
}

export type QuotaSettings = z.output<z.ZodObject<ReturnType<typeof quotaSettings>>>;
