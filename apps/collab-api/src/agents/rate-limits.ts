import { createWindowedRateLimit, type Redis, type WindowedRateLimit } from '@repo/rate-limit';
import type { AgentRateLimit } from '../generated/prisma/client.js';
import { MAX_RATE_LIMIT } from './settings.js';

/** The windows of every agent's rate limit, by the names the API and its messages use. */
export const RATE_WINDOWS = { second: 1, minute: 60, hour: 3600 } as const;
export type RateWindow = keyof typeof RATE_WINDOWS;
export type RateLimits = Record<RateWindow, number>;

/**
 * A rate limit as the API takes it: a non-negative integer, given as a number or as a string of
 * digits ("10"). Anything else (a fraction, a sign, an exponent, blanks) is undefined.
 */
export function parseRateLimit(value: unknown): number | undefined {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(number) && number >= 0 && number <= MAX_RATE_LIMIT ? number : undefined;
}

export function limitsOf(
  record: Pick<AgentRateLimit, 'maxRequestsPerSecond' | 'maxRequestsPerMinute' | 'maxRequestsPerHour'>,
): RateLimits {
  return { second: record.maxRequestsPerSecond, minute: record.maxRequestsPerMinute, hour: record.maxRequestsPerHour };
}

export type AgentRequestLimit = WindowedRateLimit<RateWindow>;

/** Counts every request routed or passed through to an agent, keyed by the agent's id; in Redis when given. */
export function createAgentRequestLimit(redis?: Redis): AgentRequestLimit {
  return createWindowedRateLimit({
    keyPrefix: 'collab:agent-requests',
    windows: RATE_WINDOWS,
    describe: 'requests to this agent',
    redis,
  });
}
