import type { RequestHandler, Request, Response } from 'express';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitedError } from '@repo/errors';

export interface RateLimit {
  /** Takes one unit for `key`; throws RateLimitedError, carrying Retry-After, when none is left. */
  consume(key: string): Promise<void>;
}

export interface RateLimitOptions {
  /** Namespace of the counters, e.g. `inbox:requests`. */
  keyPrefix: string;
  /** Units per window; 0 disables the limit. */
  points: number;
  windowSeconds: number;
  /** Completes "Too many ..." in the error message, e.g. `requests: at most 600 per minute`. */
  describe: string;
  /** Counters shared by every replica through Redis; in this process when absent. */
  redis?: Redis;
}

/**
 * A fixed-window limit. With Redis, replicas share counters; if Redis fails, counting falls
 * back to this process rather than refusing every request or letting all through unchecked.
 */
export function createRateLimit(options: RateLimitOptions): RateLimit {
  if (options.points === 0) return { consume: () => Promise.resolve() };
  const memory = new RateLimiterMemory({ keyPrefix: options.keyPrefix, points: options.points, duration: options.windowSeconds });
  const limiter: RateLimiterAbstract = options.redis
    ? new RateLimiterRedis({
        storeClient: options.redis,
        keyPrefix: options.keyPrefix,
        points: options.points,
        duration: options.windowSeconds,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      })
    : memory;
  const exceeded = (state: RateLimiterRes) => new RateLimitedError(`Too many ${options.describe}`, state.msBeforeNext / 1000);
  return {
    async consume(key) {
      try {
        await limiter.consume(key);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw exceeded(rejection);
        throw rejection;
      }
    },
  };
}

/**
 * Connects to Redis for counters, so a wrong REDIS_URL stops start-up instead of silently
 * counting per process. Commands then fail fast while disconnected instead of queueing.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: true });
  // Reconnection errors are expected while Redis is away; counting falls back meanwhile.
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`Cannot connect to Redis at ${new URL(url).host}: ${(error as Error).message}`, { cause: error });
  }
  return redis;
}

/** Middleware that takes one unit per request from the caller's budget. */
export function limitRequests(limit: RateLimit, keyOf: (req: Request, res: Response) => string): RequestHandler {
  return async (req, res, next) => {
    await limit.consume(keyOf(req, res));
    next();
  };
}
