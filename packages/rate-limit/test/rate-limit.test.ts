import { randomUUID } from 'node:crypto';
import express from 'express';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { errorHandler, inboxErrorFormat, RateLimitedError } from '@repo/errors';
import { connectRedis, createRateLimit, limitRequests, type RateLimit } from '../src/index.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function rejection(limit: RateLimit, key: string): Promise<RateLimitedError> {
  try {
    await limit.consume(key);
  } catch (error) {
    expect(error).toBeInstanceOf(RateLimitedError);
    return error as RateLimitedError;
  }
  throw new Error('expected the limit to be reached');
}

describe('in-process counters', () => {
  const options = { keyPrefix: `test:${randomUUID()}`, points: 3, windowSeconds: 60, describe: 'requests: at most 3 per minute' };

  it('allows the budget, then refuses with Retry-After until the window ends', async () => {
    const limit = createRateLimit(options);
    for (let i = 0; i < 3; i++) await limit.consume('caller');
    const error = await rejection(limit, 'caller');
    expect(error.message).toBe('Too many requests: at most 3 per minute');
    expect(Number(error.headers['Retry-After'])).toBeGreaterThanOrEqual(59);
    expect(Number(error.headers['Retry-After'])).toBeLessThanOrEqual(60);
  });

  it('counts each key on its own', async () => {
    const limit = createRateLimit(options);
    for (let i = 0; i < 3; i++) await limit.consume('a');
    await expect(limit.consume('b')).resolves.toBeUndefined();
  });

  it('is disabled with 0 units', async () => {
    const limit = createRateLimit({ ...options, points: 0 });
    for (let i = 0; i < 100; i++) await limit.consume('caller');
  });
});

describe('Redis counters', () => {
  let redisA: Redis;
  let redisB: Redis;
  beforeAll(async () => {
    [redisA, redisB] = await Promise.all([connectRedis(REDIS_URL), connectRedis(REDIS_URL)]);
  });
  afterAll(() => Promise.all([redisA.quit(), redisB.quit()]));

  it('are shared by replicas, so the budget is for all of them together', async () => {
    const options = { keyPrefix: `test:${randomUUID()}`, points: 4, windowSeconds: 60, describe: 'sends' };
    const replicaA = createRateLimit({ ...options, redis: redisA });
    const replicaB = createRateLimit({ ...options, redis: redisB });
    await replicaA.consume('inbox-1');
    await replicaB.consume('inbox-1');
    await replicaA.consume('inbox-1');
    await replicaB.consume('inbox-1');
    await rejection(replicaA, 'inbox-1');
    await rejection(replicaB, 'inbox-1');
    expect(Number(await redisA.get(`${options.keyPrefix}:inbox-1`))).toBeGreaterThanOrEqual(4);
  });

  it('fall back to counting in this process when Redis goes away', async () => {
    const redis = await connectRedis(REDIS_URL);
    const limit = createRateLimit({ keyPrefix: `test:${randomUUID()}`, points: 2, windowSeconds: 60, describe: 'sends', redis });
    redis.disconnect();
    await limit.consume('k');
    await limit.consume('k');
    await rejection(limit, 'k');
  });

  it('refuse to start with an unreachable REDIS_URL', async () => {
    await expect(connectRedis('redis://127.0.0.1:1')).rejects.toThrow(/^Cannot connect to Redis at 127.0.0.1:1: /);
  });
});

describe('limitRequests', () => {
  it('answers 429 with Retry-After once a caller is over its budget', async () => {
    const limit = createRateLimit({
      keyPrefix: `test:${randomUUID()}`,
      points: 2,
      windowSeconds: 60,
      describe: 'requests: at most 2 per minute',
    });
    const app = express();
    app.use(limitRequests(limit, (req) => req.get('x-caller') ?? 'anonymous'));
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
    app.use(errorHandler({ format: inboxErrorFormat, logger: { error: () => {} } }));
    await request(app).get('/').set('x-caller', 'a').expect(200);
    await request(app).get('/').set('x-caller', 'a').expect(200);
    const limited = await request(app).get('/').set('x-caller', 'a');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.body.error).toMatchObject({ code: 'rate_limited', message: 'Too many requests: at most 2 per minute' });
    await request(app).get('/').set('x-caller', 'b').expect(200);
  });
});
