import { LRUCache } from 'lru-cache';
import { InboxApiError, InboxApiUnreachableError, type InboxApiClient } from '../api-client.js';
import { keyDigest } from './bearer.js';

/**
 * What inbox-api says of a key. `unknown` when it could not say (unreachable, rate-limited,
 * failing): the request then goes on, and inbox-api judges the key again on every call it gets.
 */
export type KeyVerdict = 'accepted' | 'rejected' | 'unknown';

/**
 * Asks inbox-api about the key `api` sends, with the cheapest call a key can make (one inbox).
 * 401 rejects it. Any answer meant for a known caller accepts it: results, or 403 for a key
 * without the permission to read inboxes.
 */
export async function askInboxApi(api: InboxApiClient): Promise<KeyVerdict> {
  try {
    await api.listInboxes({ limit: 1 });
    return 'accepted';
  } catch (error) {
    if (error instanceof InboxApiError) return error.status === 401 ? 'rejected' : error.status === 403 ? 'accepted' : 'unknown';
    if (error instanceof InboxApiUnreachableError) return 'unknown';
    throw error;
  }
}

export interface KeyChecksOptions {
  ask: (key: string) => Promise<KeyVerdict>;
  /** How long a verdict is reused. */
  ttlMs: number;
  /** Verdicts kept at most; the least recently used go first. */
  maxEntries: number;
  /** The clock of the period (tests); performance.now() by default. */
  now?: () => number;
}

/**
 * Verdicts on keys, reused for `ttlMs`, so that a stream of requests with one key costs inbox-api
 * one check per period and not one per request; concurrent requests with a key new to this
 * process share one check. `unknown` is not kept. Reuse is safe because the verdict only decides
 * whether the transport answers 401 up front: every tool call still presents the key to
 * inbox-api, which refuses a key revoked in the meantime (the tool's result says `unauthorized`).
 */
export class KeyChecks {
  private readonly verdicts: LRUCache<string, Promise<KeyVerdict>>;

  constructor(private readonly options: KeyChecksOptions) {
    this.verdicts = new LRUCache({
      max: options.maxEntries,
      ttl: options.ttlMs,
      // The clock read at every look-up, not reused for a millisecond behind a timer.
      ttlResolution: 0,
      ...(options.now && { perf: { now: options.now } }),
    });
  }

  verdictOn(key: string): Promise<KeyVerdict> {
    const id = keyDigest(key);
    const known = this.verdicts.get(id);
    if (known) return known;
    const verdict = this.options.ask(key);
    const forget = () => {
      if (this.verdicts.peek(id) === verdict) this.verdicts.delete(id);
    };
    void verdict.then((answer) => {
      if (answer === 'unknown') forget();
    }, forget);
    this.verdicts.set(id, verdict);
    return verdict;
  }
}
