import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimitedError } from '@repo/errors';
import { connectRedis, createWindowedRateLimit, type WindowedRateLimit } from '../src/index.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const WINDOWS = { second: 1, minute: 60, hour: 3600 };
type Window = keyof typeof WINDOWS;

async function rejection(
  limit: WindowedRateLimit<Window>,
  key: string,
  limits: Record<Window, number>,
): Promise<RateLimitedError> {
  const error = await limit.consume(key, limits).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(RateLimitedError);
  return error as RateLimitedError;
}

function limiter(redis?: Redis, keyPrefix = `test:${randomUUID()}`) {
  return createWindowedRateLimit({ keyPrefix, windows: WINDOWS, describe: 'requests to this agent', redis });
}

describe('windowed limits in this process', () => {
  it('refuses once any window is used up, naming it, with Retry-After until it ends', async () => {
    const limit = limiter();
    const limits = { second: 0, minute: 3, hour: 100 };
    for (let i = 0; i < 3; i++) await limit.consume('agent', limits);
    const error = await rejection(limit, 'agent', limits);
    expect(error.message).toBe('Too many requests to this agent: at most 3 per minute');
    expect(Number(error.headers['Retry-After'])).toBeGreaterThanOrEqual(59);
    expect(Number(error.headers['Retry-After'])).toBeLessThanOrEqual(60);
  });

  it('takes nothing from the other windows when one refuses', async () => {
    const limit = limiter();
    await limit.consume('agent', { second: 1, minute: 10, hour: 2 });
    await rejection(limit, 'agent', { second: 1, minute: 10, hour: 2 });
    // The second window refused: the minute and hour windows counted only the first request.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await limit.consume('agent', { second: 1, minute: 10, hour: 2 });
    const error = await rejection(limit, 'agent', { second: 5, minute: 10, hour: 2 });
    expect(error.message).toBe('Too many requests to this agent: at most 2 per hour');
  });

  it('reads the limits at each call: raising one lets more through, keeping the count', async () => {
    const limit = limiter();
    await limit.consume('agent', { second: 0, minute: 1, hour: 0 });
    await rejection(limit, 'agent', { second: 0, minute: 1, hour: 0 });
    await limit.consume('agent', { second: 0, minute: 2, hour: 0 });
    await rejection(limit, 'agent', { second: 0, minute: 2, hour: 0 });
  });

  it('gives back a unit of every window a consume counted, for a request not made after all', async () => {
    const limit = limiter();
    const limits = { second: 0, minute: 2, hour: 2 };
    await limit.consume('agent', limits);
    await limit.consume('agent', limits);
    await rejection(limit, 'agent', limits);
    await limit.giveBack('agent', limits);
    await limit.consume('agent', limits);
    await rejection(limit, 'agent', limits);
  });

  it('counts each key on its own, and 0 everywhere means no limit', async () => {
    const limit = limiter();
    await limit.consume('a', { second: 1, minute: 1, hour: 1 });
    await limit.consume('b', { second: 1, minute: 1, hour: 1 });
    for (let i = 0; i < 50; i++) await limit.consume('c', { second: 0, minute: 0, hour: 0 });
  });

  it('lets exactly the budget through when requests arrive at once', async () => {
    const limit = limiter();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => limit.consume('agent', { second: 0, minute: 7, hour: 10 })),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(7);
    // The hour window kept only the 7 that went through: 3 more fit in it.
    const hourOnly = { second: 0, minute: 0, hour: 10 };
    for (let i = 0; i < 3; i++) await limit.consume('agent', hourOnly);
    await rejection(limit, 'agent', hourOnly);
  });
});

describe('windowed limits in Redis', () => {
  let redisA: Redis;
  let redisB: Redis;
  beforeAll(async () => {
    [redisA, redisB] = await Promise.all([connectRedis(REDIS_URL), connectRedis(REDIS_URL)]);
  });
  afterAll(() => Promise.all([redisA.quit(), redisB.quit()]));

  it('are one budget for every replica', async () => {
    const keyPrefix = `test:${randomUUID()}`;
    const [replicaA, replicaB] = [limiter(redisA, keyPrefix), limiter(redisB, keyPrefix)];
    const limits = { second: 0, minute: 4, hour: 0 };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? replicaA : replicaB).consume('agent', limits)),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(4);
    await rejection(replicaB, 'agent', limits);
    expect(Number(await redisA.get(`${keyPrefix}:minute:agent`))).toBeGreaterThanOrEqual(4);
  });

  it('fall back to this process when Redis goes away', async () => {
    const redis = await connectRedis(REDIS_URL);
    const limit = limiter(redis);
    redis.disconnect();
    const limits = { second: 0, minute: 2, hour: 0 };
    await limit.consume('agent', limits);
    await limit.consume('agent', limits);
    await rejection(limit, 'agent', limits);
  });
});
