/**
 * Money and quota arithmetic of query costs, pure. Amounts are whole micro-dollars (bigint), the
 * 6 decimal places the records and the API keep, so that sums never drift; days and months are UTC.
 */

const MICROS_PER_USD = 1_000_000n;
const BYTES_PER_TIB = 2n ** 40n;
const USD_AMOUNT = /^(\d{1,13})(?:\.(\d{1,6}))?$/;

/** `"12.5"` → 12_500_000n; undefined for anything but a non-negative amount with at most 6 decimals. */
export function parseUsd(text: string): bigint | undefined {
  const match = USD_AMOUNT.exec(text);
  if (!match) return undefined;
  return BigInt(match[1]!) * MICROS_PER_USD + BigInt((match[2] ?? '').padEnd(6, '0'));
}

/** 12_500_000n → `"12.500000"` */
export function formatUsd(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  return `${sign}${abs / MICROS_PER_USD}.${String(abs % MICROS_PER_USD).padStart(6, '0')}`;
}

/** contract.md: `cost_usd = bytes / 2^40 * price per TiB` (of the bytes billed), rounded half up to the micro-dollar. */
export function costMicros(bytesProcessed: bigint, pricePerTibMicros: bigint): bigint {
  return (bytesProcessed * pricePerTibMicros + BYTES_PER_TIB / 2n) / BYTES_PER_TIB;
}

export function startOfUtcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

export function startOfUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export interface Usage {
  dailyMicros: bigint;
  monthlyMicros: bigint;
  lastResetDaily: Date;
  lastResetMonthly: Date;
}

/** The usage as of `now`: a cost of an earlier UTC day (month) no longer counts for the day (month). */
export function usageAt(usage: Usage, now: Date): Usage {
  const day = startOfUtcDay(now);
  const month = startOfUtcMonth(now);
  const newDay = usage.lastResetDaily.getTime() < day.getTime();
  const newMonth = usage.lastResetMonthly.getTime() < month.getTime();
  return {
    dailyMicros: newDay ? 0n : usage.dailyMicros,
    monthlyMicros: newMonth ? 0n : usage.monthlyMicros,
    lastResetDaily: newDay ? day : usage.lastResetDaily,
    lastResetMonthly: newMonth ? month : usage.lastResetMonthly,
  };
}

export interface Quota {
  dailyMicros: bigint;
  monthlyMicros: bigint;
}

export interface QuotaStatus {
  dailyRemainingMicros: bigint;
  monthlyRemainingMicros: bigint;
  dailyPercentageUsed: number;
  monthlyPercentageUsed: number;
  dailyExceeded: boolean;
  monthlyExceeded: boolean;
}

/** A quota is used up once the usage reaches it (a quota of 0 allows nothing); remaining never goes below 0. */
export function quotaStatus(quota: Quota, usage: Pick<Usage, 'dailyMicros' | 'monthlyMicros'>): QuotaStatus {
  return {
    dailyRemainingMicros: remaining(quota.dailyMicros, usage.dailyMicros),
    monthlyRemainingMicros: remaining(quota.monthlyMicros, usage.monthlyMicros),
    dailyPercentageUsed: percentage(quota.dailyMicros, usage.dailyMicros),
    monthlyPercentageUsed: percentage(quota.monthlyMicros, usage.monthlyMicros),
    dailyExceeded: usage.dailyMicros >= quota.dailyMicros,
    monthlyExceeded: usage.monthlyMicros >= quota.monthlyMicros,
  };
}

function remaining(quota: bigint, used: bigint): bigint {
  return used >= quota ? 0n : quota - used;
}

/** Used as a percentage of the quota, to two decimals; 100 for a quota of 0. */
function percentage(quota: bigint, used: bigint): number {
  if (quota === 0n) return 100;
  return Number((used * 10_000n) / quota) / 100;
}

/** Why a run is refused, with the seconds until the period that is used up starts again; undefined when it may run. */
export function quotaRefusal(status: QuotaStatus, now: Date): { message: string; retryAfterSeconds: number } | undefined {
  const seconds = (until: Date) => Math.ceil((until.getTime() - now.getTime()) / 1000);
  if (status.monthlyExceeded) {
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    return {
      message: 'The monthly query cost quota of your tenant is used up; it resets at the start of the next UTC month',
      retryAfterSeconds: seconds(next),
    };
  }
  if (status.dailyExceeded) {
    const next = new Date(startOfUtcDay(now).getTime() + 86_400_000);
    return {
      message: 'The daily query cost quota of your tenant is used up; it resets at 00:00 UTC',
      retryAfterSeconds: seconds(next),
    };
  }
  return undefined;
}
