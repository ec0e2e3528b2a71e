import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitedError } from '@repo/errors';

export interface WindowedRateLimit<W extends string> {
  /**
   * Takes one unit for `key` from every window, or none at all: throws RateLimitedError,
   * carrying Retry-After until the end of a used-up window, when any window has no unit left.
   * `limits` are the units per window for this key (0: no limit in that window), so each key
   * may have limits of its own, and changing them keeps what was counted.
   */
  consume(key: string, limits: Readonly<Record<W, number>>): Promise<void>;
  /**
   * Gives back the unit a consume with the same `limits` took, for a request that was not made
   * after all (refused by a later check, or a retry another request already answered).
   */
  giveBack(key: string, limits: Readonly<Record<W, number>>): Promise<void>;
}

export interface WindowedRateLimitOptions<W extends string> {
  /** Namespace of the counters, e.g. `collab:agent-requests`. */
  keyPrefix: string;
  /** Each window's length in seconds, by the name the error message uses: `{ second: 1, minute: 60 }`. */
  windows: Readonly<Record<W, number>>;
  /** Completes "Too many ...", e.g. `requests to this agent`. */
  describe: string;
  /** Counters shared by every replica through Redis; in this process when absent. */
  redis?: Redis;
}

// The counters only count: the limits are compared with their counts in consume, per key.
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/**
 * Several fixed windows on one key (per second, minute and hour, say). As with createRateLimit,
 * Redis counters fall back to this process when Redis fails.
 */
export function createWindowedRateLimit<W extends string>(options: WindowedRateLimitOptions<W>): WindowedRateLimit<W> {
  const windows = (Object.entries(options.windows) as [W, number][]).map(([name, seconds]) => {
    const keyPrefix = `${options.keyPrefix}:${name}`;
    const memory = new RateLimiterMemory({ keyPrefix, points: UNBOUNDED, duration: seconds });
    const limiter: RateLimiterAbstract = options.redis
      ? new RateLimiterRedis({
          storeClient: options.redis,
          keyPrefix,
          points: UNBOUNDED,
          duration: seconds,
          rejectIfRedisNotReady: true,
          insuranceLimiter: memory,
        })
      : memory;
    return { name, limiter, memory };
  });
  const exceeded = (name: W, limit: number, state: RateLimiterRes) =>
    new RateLimitedError(`Too many ${options.describe}: at most ${limit} per ${name}`, state.msBeforeNext / 1000);

  const limitedBy = (limits: Readonly<Record<W, number>>) => windows.filter((window) => limits[window.name] > 0);
  const giveBack = async (key: string, limited: typeof windows) => {
    await Promise.all(limited.map((window) => window.limiter.reward(key).catch(() => undefined)));
  };

  return {
    async consume(key, limits) {
      const limited = limitedBy(limits);
      // Checked first, so that a refused request takes nothing from the windows that still have room.
      const counted = await Promise.all(limited.map((window) => window.limiter.get(key).catch(() => window.memory.get(key))));
      for (const [i, window] of limited.entries()) {
        const state = counted[i];
        if (state && state.consumedPoints >= limits[window.name]) throw exceeded(window.name, limits[window.name], state);
      }
      // Requests at the same time may all pass the check; counting is atomic, so one that went over
      // a window gives back every unit it took (others may be over only because of it), and is refused.
      const taken = await Promise.all(limited.map((window) => window.limiter.consume(key)));
      const over = limited.findIndex((window, i) => taken[i]!.consumedPoints > limits[window.name]);
      if (over === -1) return;
      await giveBack(key, limited);
      const window = limited[over]!;
      throw exceeded(window.name, limits[window.name], taken[over]!);
    },
    async giveBack(key, limits) {
      await giveBack(key, limitedBy(limits));
    },
  };
}
