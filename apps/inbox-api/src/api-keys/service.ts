import { isForeignKeyViolation } from '@repo/db';
import { NotFoundError, UnauthorizedError, ValidationError } from '@repo/errors';
import type { Database, Transaction } from '../database.js';
import { type ApiKey, Prisma } from '../generated/prisma/client.js';
import { waitForSends } from '../messages/outbox.js';
import { findOrganization } from '../organizations/service.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import { KEY_REVOKED, type KeyDirectory } from './directory.js';
import type { ApiKeyResponse, CreateApiKeyInput, CreatedApiKeyResponse } from './schemas.js';
import {
  type Actor,
  canReachInbox,
  canReachKey,
  DEFAULT_ORGANIZATION_ID,
  type KeyScope,
  limitsOfNewKey,
  organizationFor,
  organizationNotFound,
  scopeOf,
  type Scope,
} from './scope.js';
import { newSecret, secretHash, shownPrefix } from './secrets.js';

export function toApiKeyResponse(key: ApiKey): ApiKeyResponse {
  return {
    id: key.id,
    name: key.name,
    organization_id: key.organizationId,
    inbox_ids: key.inboxIds.length > 0 ? key.inboxIds : null,
    permissions: key.permissions,
    prefix: key.prefix,
    rate_limit_per_minute: key.rateLimitPerMinute,
    send_limit_per_hour: key.sendLimitPerHour,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

function keyScopeOf(key: ApiKey): KeyScope {
  return { organizationId: key.organizationId, ...(key.inboxIds.length > 0 && { inboxIds: key.inboxIds }) };
}

/**
 * Creates a key in the organization named (within the caller's scope, 404 otherwise) or the
 * caller's own, limited to `inbox_ids` when given (each a live inbox of that organization within
 * the caller's scope, 404 otherwise), and no broader than the caller (403, scope.ts). The secret
 * is in the answer only.
 */
export async function createApiKey(
  db: Database,
  actor: Actor,
  input: CreateApiKeyInput,
  defaults: { perMinute: number; sendsPerHour: number },
): Promise<CreatedApiKeyResponse> {
  const scope = scopeOf(actor);
  const organizationId = await organizationOfNew(db, scope, input);
  await findOrganization(db, scope, organizationId);
  const inboxIds = input.inbox_ids && (await reachableInboxes(db, scope, organizationId, [...new Set(input.inbox_ids)]));
  const permissions = [...new Set(input.permissions)];
  const limits = limitsOfNewKey(
    actor,
    {
      inboxIds,
      permissions,
      rateLimitPerMinute: input.rate_limit_per_minute,
      sendLimitPerHour: input.send_limit_per_hour,
    },
    defaults,
  );
  const secret = newSecret();
  try {
    const key = await writeAsLiveKey(db, actor, (tx) =>
      tx.apiKey.create({
        data: {
          organizationId,
          name: input.name,
          prefix: shownPrefix(secret),
          secretHash: secretHash(secret),
          inboxIds: inboxIds ?? [],
          permissions,
          ...limits,
        },
      }),
    );
    return { ...toApiKeyResponse(key), key: secret };
  } catch (error) {
    // The organization was deleted since it was found.
    if (isForeignKeyViolation(error)) throw organizationNotFound(organizationId);
    throw error;
  }
}

/**
 * The organization of a new key or webhook (organizationFor): the one named, or the caller's own.
 * An operator that names none but limits it to inboxes gets theirs: they must all be of one
 * organization (400 otherwise); inboxes not found leave it `default`, where reachableInboxes
 * answers 404 for them.
 */
export async function organizationOfNew(
  db: Database,
  scope: Scope,
  input: { organization_id?: string; inbox_ids?: readonly string[] | null },
): Promise<string> {
  if (input.organization_id !== undefined || scope.organizationId !== undefined || !input.inbox_ids?.length) {
    return organizationFor(scope, input.organization_id);
  }
  const organizations = await db.inbox.findMany({
    where: { id: { in: input.inbox_ids.filter(isUuid).map((id) => id.toLowerCase()) }, deletedAt: null },
    select: { organizationId: true },
    distinct: ['organizationId'],
  });
  if (organizations.length > 1) {
    const message = 'inbox_ids name inboxes of several organizations; a key or webhook belongs to one: give organization_id';
    throw new ValidationError([{ loc: ['body', 'inbox_ids'], msg: message, type: 'value_error' }], message);
  }
  return organizations[0]?.organizationId ?? DEFAULT_ORGANIZATION_ID;
}

/**
 * The ids, each a live inbox of the organization within the scope, as the database spells them (a
 * UUID in capitals names the same inbox); 404 for the first that is not.
 */
export async function reachableInboxes(db: Database, scope: Scope, organizationId: string, ids: string[]): Promise<string[]> {
  const wanted = ids.filter(isUuid).map((id) => id.toLowerCase());
  const found = await db.inbox.findMany({
    where: { id: { in: wanted }, organizationId, deletedAt: null },
    select: { id: true, organizationId: true },
  });
  const reachable = new Set(found.filter((inbox) => canReachInbox(scope, inbox)).map((inbox) => inbox.id));
  const missing = ids.find((id) => !reachable.has(id.toLowerCase()));
  if (missing !== undefined) throw new NotFoundError('Inbox not found', { inbox_id: missing });
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}

/**
 * The live keys the caller can reach, newest first: an operator's, every key (or one
 * organization's); an API key's, those of its organization that reach nothing it cannot.
 */
export async function listApiKeys(
  db: Database,
  scope: Scope,
  query: { organization_id?: string; limit: number; offset: number; page_token?: string },
): Promise<Page<ApiKeyResponse>> {
  if (query.organization_id !== undefined) await findOrganization(db, scope, query.organization_id);
  const organizationId = query.organization_id ?? scope.organizationId;
  const conditions = [Prisma.sql`revoked_at IS NULL`];
  if (organizationId !== undefined) conditions.push(Prisma.sql`organization_id = ${organizationId}`);
  if (scope.inboxIds !== undefined) {
    conditions.push(Prisma.sql`cardinality(inbox_ids) > 0 AND inbox_ids <@ ${[...scope.inboxIds]}::uuid[]`);
  }
  const where = Prisma.join(conditions, ' AND ');
  const { rows, total, next } = await readPage(
    query,
    'api-keys',
    NEWEST_FIRST,
    (_after, take, skip, key) => db.$queryRaw<{ id: string; createdAt: Date }[]>`
      SELECT id, created_at AS "createdAt" FROM api_keys
       WHERE ${where} ${key ? Prisma.sql`AND (created_at, id) < (${key[0]}::timestamptz, ${key[1]}::uuid)` : Prisma.empty}
       ORDER BY created_at DESC, id DESC LIMIT ${take} OFFSET ${skip}`,
    async () =>
      Number((await db.$queryRaw<{ total: bigint }[]>`SELECT count(*) AS total FROM api_keys WHERE ${where}`)[0]?.total ?? 0),
  );
  const keys = await db.apiKey.findMany({
    where: { id: { in: rows.map((row) => row.id) } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  return page(keys.map(toApiKeyResponse), total, next);
}

export interface KeyRevocation {
  db: Database;
  apiKeys: KeyDirectory;
}

/**
 * Revokes a key the caller can reach (404 otherwise). Its row is locked first, so the revocation
 * waits for the sends whose transaction holds it (holdLiveKey) and sends that begin later answer
 * 401; then this replica forgets the key, and the answer waits for the sends recorded before it
 * (up to `waitSeconds`): nothing is sent with the key once its revocation has answered. Other
 * replicas refuse it within their key cache period (directory.ts).
 */
export async function revokeApiKey(
  deps: KeyRevocation,
  scope: Scope,
  keyId: string,
  options: { waitSeconds: number },
): Promise<void> {
  const notFound = new NotFoundError('API key not found', { api_key_id: keyId });
  const key = isUuid(keyId) ? await deps.db.apiKey.findFirst({ where: { id: keyId, revokedAt: null } }) : null;
  if (!key || !canReachKey(scope, keyScopeOf(key))) throw notFound;
  const revoked = await deps.db.$transaction(async (tx) => {
    const [live] = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM api_keys WHERE id = ${keyId}::uuid AND revoked_at IS NULL FOR UPDATE`;
    if (!live) return false;
    await tx.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    return true;
  });
  if (!revoked) throw notFound;
  deps.apiKeys.forget({ keyId });
  await waitForSends(deps.db, { apiKeyId: keyId }, options.waitSeconds);
}

/**
 * In a transaction that starts a send with an API key: holds the key (FOR KEY SHARE, which a
 * revocation's FOR UPDATE waits for, and the look-ups' updates of last_used_at do not), and
 * answers 401 when it was revoked, whatever a replica's cache says.
 */
export async function holdLiveKey(tx: Transaction, keyId: string): Promise<void> {
  const [live] = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM api_keys WHERE id = ${keyId}::uuid AND revoked_at IS NULL FOR KEY SHARE`;
  if (!live) throw new UnauthorizedError(KEY_REVOKED);
}

/**
 * Runs a write that grants or redirects access (a key, a webhook) in a transaction that holds the
 * actor's key (holdLiveKey): a key revoked while its request waited writes nothing (401), as the
 * revocation promises. The actor was authenticated when the request began, not when it writes.
 */
export function writeAsLiveKey<T>(db: Database, actor: Actor, write: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.$transaction(async (tx) => {
    if (actor.kind === 'key') await holdLiveKey(tx, actor.keyId);
    return write(tx);
  });
}
