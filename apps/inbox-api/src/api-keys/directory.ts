import { setImmediate } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Database } from '../database.js';
import type { ApiKey } from '../generated/prisma/client.js';
import type { Actor } from './scope.js';
import { isWellFormedSecret, secretHash } from './secrets.js';

/**
 * How long a replica trusts what it read of a key. A key revoked on one replica is refused there
 * at once, and by every other replica within this time (its cached entry expires). Sends check
 * the key in their own transaction whatever the cache says (messages/send.ts).
 */
export const KEY_CACHE_MS = 2000;
/** What a caller whose key was revoked is told where a key already checked is refused (a send, a wait, a stream). */
export const KEY_REVOKED = 'This API key has been revoked';

/** Entries kept at most; past it, the least recently used goes. */
const MAX_ENTRIES = 10_000;

type KeyActor = Extract<Actor, { kind: 'key' }>;

/** The API keys of the database, as callers present them: looked up by the hash of their secret, cached briefly. */
export interface KeyDirectory {
  /** The key a secret belongs to, while it is not revoked; undefined for anything else (malformed, unknown, revoked). */
  find(secret: string): Promise<KeyActor | undefined>;
  /**
   * Whether a key found before still stands (not revoked, not deleted), for requests that outlive
   * their authentication: a wait, a stream. Read at most once per KEY_CACHE_MS per replica, and at
   * once after forget.
   */
  stands(keyId: string): Promise<boolean>;
  /** Drops what is cached of the keys `which` names, once they are revoked or deleted on this replica. */
  forget(which: { keyId?: string; organizationId?: string }): void;
}

export function keyDirectory(db: Database): KeyDirectory {
  // ttlResolution 0: the clock read at every look-up, with no timer set to reuse it for a millisecond.
  const cache = new LRUCache<string, KeyActor>({ max: MAX_ENTRIES, ttl: KEY_CACHE_MS, ttlResolution: 0 });
  // One look-up at a time per secret: requests arriving together share it.
  const pending = new Map<string, Promise<KeyActor | undefined>>();
  // Counts revocations seen here: a look-up that began before one is not cached, since it may
  // have read the key before it was revoked.
  let revocations = 0;
  // stands(): by key id. The keys asked in one turn of the event loop are read by one query, and a
  // key being read is not read again: an event reaching a thousand streams reads their keys once.
  const standing = new LRUCache<string, boolean>({ max: MAX_ENTRIES, ttl: KEY_CACHE_MS, ttlResolution: 0 });
  const pendingStands = new Map<string, Promise<boolean>>();
  let batch: { keyIds: string[]; live: Promise<Set<string>> } | undefined;
  const readStanding = async (keyIds: string[]): Promise<Set<string>> => {
    const seen = revocations;
    const rows = await db.apiKey.findMany({ where: { id: { in: keyIds }, revokedAt: null }, select: { id: true } });
    const live = new Set(rows.map((row) => row.id));
    if (seen === revocations) for (const keyId of keyIds) standing.set(keyId, live.has(keyId));
    return live;
  };
  const batched = (keyId: string): Promise<boolean> => {
    if (!batch) {
      const keyIds: string[] = [];
      const live = setImmediate().then(() => {
        batch = undefined;
        return readStanding(keyIds);
      });
      batch = { keyIds, live };
    }
    batch.keyIds.push(keyId);
    return batch.live.then((live) => live.has(keyId));
  };

  const lookUp = async (hash: string): Promise<KeyActor | undefined> => {
    const seen = revocations;
    // The look-up itself records the use: at most once per cache period per replica.
    const [key] = await db.apiKey.updateManyAndReturn({
      where: { secretHash: hash, revokedAt: null },
      data: { lastUsedAt: new Date() },
    });
    if (!key) return undefined;
    const actor = keyActor(key);
    if (seen === revocations) cache.set(hash, actor);
    return actor;
  };

  return {
    async find(secret) {
      // A look-alike costs no query.
      if (!isWellFormedSecret(secret)) return undefined;
      const hash = secretHash(secret);
      const cached = cache.get(hash);
      if (cached) return cached;
      return sharedRead(pending, hash, () => lookUp(hash));
    },
    async stands(keyId) {
      const cached = standing.get(keyId);
      if (cached !== undefined) return cached;
      return sharedRead(pendingStands, keyId, () => batched(keyId));
    },
    forget({ keyId, organizationId }) {
      revocations++;
      pending.clear();
      pendingStands.clear();
      standing.clear();
      const revoked = [...cache.entries()].filter(
        ([, actor]) => actor.keyId === keyId || actor.scope.organizationId === organizationId,
      );
      for (const [hash] of revoked) cache.delete(hash);
    },
  };
}

/** The read of `key` under way, or one started by `start`: callers asking together share it; it leaves `pending` when it ends. */
function sharedRead<T>(pending: Map<string, Promise<T>>, key: string, start: () => Promise<T>): Promise<T> {
  const underway = pending.get(key);
  if (underway) return underway;
  const started = start().finally(() => {
    if (pending.get(key) === started) pending.delete(key);
  });
  pending.set(key, started);
  return started;
}

/** A key's record as the caller it authenticates. */
export function keyActor(key: ApiKey): KeyActor {
  return {
    kind: 'key',
    keyId: key.id,
    limitKey: `api-key:${key.id}`,
    scope: { organizationId: key.organizationId, ...(key.inboxIds.length > 0 && { inboxIds: key.inboxIds }) },
    permissions: new Set(key.permissions),
    limits: { rateLimitPerMinute: key.rateLimitPerMinute, sendLimitPerHour: key.sendLimitPerHour },
  };
}

/**
 * For a request that outlives its authentication (a wait, a stream): whether its caller may still
 * be answered. Only organization keys can be revoked; other callers always may.
 */
export function callerStands(directory: KeyDirectory, actor: Actor): () => Promise<boolean> {
  return actor.kind === 'key' ? () => directory.stands(actor.keyId) : () => Promise.resolve(true);
}
