import type { Logger } from '@repo/http';
import pg from 'pg';
import { EVENTS_CHANNEL, type EventSignal } from './log.js';

/** How long to wait before listening again after the connection dropped. */
const RECONNECT_MS = 1000;

/**
 * One waiter's interest in new events. `ready` resolves once the process is listening (query
 * after it, so that nothing committed between the query and the wait is missed); `next` resolves
 * true at the first matching signal since the last call (or a reconnection, after which anything
 * may have been missed), false when the time runs out or `abort` fires.
 */
export interface Subscription {
  ready: Promise<void>;
  next(options: { timeoutMs?: number; abort?: AbortSignal }): Promise<boolean>;
  close(): void;
}

/**
 * The process's one LISTEN connection, shared by every long-poll and stream: a waiter costs a
 * closure in memory and no database query until a commit that may interest it (on any replica,
 * since NOTIFY reaches every listener of the database). Connects at the first subscription.
 */
/**
 * Whether `ready` settles before `timeoutMs` pass or `abort` fires: a wait must not outlast its
 * time while the LISTEN connection cannot be opened (the database full, failing over).
 */
export async function readyWithin(ready: Promise<void>, options: { timeoutMs?: number; abort?: AbortSignal }): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      ready.then(() => true),
      new Promise<boolean>((resolve) => {
        if (options.timeoutMs !== undefined) timer = setTimeout(() => resolve(false), Math.max(0, options.timeoutMs));
        onAbort = () => resolve(false);
        if (options.abort?.aborted) onAbort();
        options.abort?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) options.abort?.removeEventListener('abort', onAbort);
  }
}

export interface EventListener {
  subscribe(matches: (signal: EventSignal) => boolean): Subscription;
  /** Waiters now (for tests and metrics). */
  readonly size: number;
  /** Waiters waiting for a signal now, in `next` (for tests and metrics): the others are reading. */
  readonly waiting: number;
  close(): Promise<void>;
}

interface Waiter {
  matches: (signal: EventSignal) => boolean;
  signalled: boolean;
  wake?: () => void;
}

export function createEventListener(options: { connectionString: string; logger: Logger }): EventListener {
  const waiters = new Set<Waiter>();
  let listening: Promise<void> | undefined;
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  // Ends the wait for a retry that close() cancels, so that nothing awaits it for ever.
  let endRetry: (() => void) | undefined;

  const wake = (waiter: Waiter) => {
    waiter.signalled = true;
    waiter.wake?.();
  };

  function listen(): Promise<void> {
    listening ??= connect().catch((error: unknown) => {
      options.logger.error({ err: error }, 'could not listen for events; trying again');
      return reconnectSoon();
    });
    return listening;
  }

  async function connect(): Promise<void> {
    const connection = new pg.Client({ connectionString: options.connectionString });
    connection.on('notification', (message) => {
      if (message.channel !== EVENTS_CHANNEL || !message.payload) return;
      const signal = JSON.parse(message.payload) as EventSignal;
      for (const waiter of waiters) if (waiter.matches(signal)) wake(waiter);
    });
    connection.on('error', (error) => {
      options.logger.warn({ err: error }, 'the events connection failed; listening again');
      if (client === connection) void reconnectSoon();
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      // A connection that opened but could not LISTEN is not left open at each retry.
      await connection.end().catch(() => undefined);
      throw error;
    }
    if (closed) {
      await connection.end();
      return;
    }
    client = connection;
  }

  /** Drops the connection and listens again shortly; every waiter looks again, as signals may have been lost meanwhile. */
  function reconnectSoon(): Promise<void> {
    const old = client;
    client = undefined;
    void old?.end().catch(() => undefined);
    listening = closed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          endRetry = resolve;
          retry = setTimeout(() => {
            listening = undefined;
            void listen().then(() => {
              for (const waiter of waiters) wake(waiter);
              resolve();
            });
          }, RECONNECT_MS);
        });
    return listening;
  }

  return {
    get size() {
      return waiters.size;
    },
    get waiting() {
      let count = 0;
      for (const waiter of waiters) if (waiter.wake) count += 1;
      return count;
    },
    subscribe(matches) {
      const waiter: Waiter = { matches, signalled: false };
      waiters.add(waiter);
      return {
        ready: listen(),
        next({ timeoutMs, abort }) {
          if (waiter.signalled) {
            waiter.signalled = false;
            return Promise.resolve(true);
          }
          return new Promise<boolean>((resolve) => {
            const finish = (woken: boolean) => {
              clearTimeout(timer);
              abort?.removeEventListener('abort', onAbort);
              waiter.wake = undefined;
              if (woken) waiter.signalled = false;
              resolve(woken);
            };
            const onAbort = () => finish(false);
            const timer = timeoutMs === undefined ? undefined : setTimeout(() => finish(false), timeoutMs);
            if (abort?.aborted) return finish(false);
            abort?.addEventListener('abort', onAbort, { once: true });
            waiter.wake = () => finish(true);
          });
        },
        close() {
          waiter.wake = undefined;
          waiters.delete(waiter);
        },
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      endRetry?.();
      for (const waiter of waiters) wake(waiter);
      waiters.clear();
      await listening?.catch(() => undefined);
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
