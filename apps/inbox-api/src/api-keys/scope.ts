/**
 * Who is calling and what they may reach, as plain values, and the rules on them as pure
 * functions: the one place that decides what a caller sees (another scope's records are not
 * found: 404, never 403) and what it may do (a missing permission: 403).
 */
import { ForbiddenError, NotFoundError } from '@repo/errors';

export const PERMISSIONS = ['read', 'send', 'manage', 'approve'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The organization inboxes go to when none is named, by operators and in open mode. */
export const DEFAULT_ORGANIZATION_ID = 'default';

/**
 * What a caller can reach: every organization (`organizationId` absent: operators), or one, and
 * then every inbox of it (`inboxIds` absent) or only those.
 */
export interface Scope {
  organizationId?: string;
  inboxIds?: readonly string[];
}

/** Request and send limits of an API key as set on it: null follows the service's setting; 0 is no limit. */
export interface KeyLimits {
  rateLimitPerMinute: number | null;
  sendLimitPerHour: number | null;
}

export type Actor =
  /** A key of INBOX_API_KEYS, or anyone when none is configured (open mode): everything. */
  | { kind: 'operator'; limitKey: string }
  /** An API key of an organization. */
  | { kind: 'key'; keyId: string; limitKey: string; scope: KeyScope; permissions: ReadonlySet<Permission>; limits: KeyLimits }
  /**
   * A request that carries a signed download link (token and expires) instead of a key: the
   * link is its credential, checked by the route it opens, and it reaches nothing else.
   */
  | { kind: 'link' };

/** Every inbox of every organization: an operator's scope. */
export const EVERY_INBOX: Scope = {};
// No organization has an empty id, and no inbox is in an empty list.
const NOTHING: Scope = { organizationId: '', inboxIds: [] };

export function scopeOf(actor: Actor): Scope {
  if (actor.kind === 'operator') return EVERY_INBOX;
  if (actor.kind === 'key') return actor.scope;
  return NOTHING;
}

/** 403 unless the caller has every one of `permissions` (operators have all; a download link only opens its content). */
export function requirePermission(actor: Actor, ...permissions: [Permission, ...Permission[]]): void {
  if (actor.kind === 'operator') return;
  const missing = permissions.find((permission) => actor.kind !== 'key' || !actor.permissions.has(permission));
  if (missing !== undefined) throw lacking(actor, `\`${missing}\``);
}

/** 403 unless the caller has at least one of `permissions`: a draft is read by the agent that wrote it, its reviewer, or a reader. */
export function requireSomePermission(actor: Actor, ...permissions: [Permission, Permission, ...Permission[]]): void {
  if (actor.kind === 'operator') return;
  if (actor.kind === 'key' && permissions.some((permission) => actor.permissions.has(permission))) return;
  const names = permissions.map((permission) => `\`${permission}\``);
  throw lacking(actor, `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`);
}

function lacking(actor: Actor, permissions: string): ForbiddenError {
  return new ForbiddenError(
    actor.kind === 'key'
      ? `This API key lacks the ${permissions} permission`
      : 'A download link opens its attachment only: send Authorization: Bearer <key>',
  );
}

/** 403 unless the caller is an operator (a key of INBOX_API_KEYS, or anyone in open mode). */
export function requireOperator(actor: Actor): void {
  if (actor.kind !== 'operator') throw new ForbiddenError('Only operator keys (INBOX_API_KEYS) may do this');
}

/** Whether an inbox is within the scope. */
export function canReachInbox(scope: Scope, inbox: { id: string; organizationId: string }): boolean {
  return canReachOrganization(scope, inbox.organizationId) && (scope.inboxIds === undefined || scope.inboxIds.includes(inbox.id));
}

export function canReachOrganization(scope: Scope, organizationId: string): boolean {
  return scope.organizationId === undefined || scope.organizationId === organizationId;
}

/** The condition on inboxes that keeps a query within the scope (Prisma's InboxWhereInput). */
export function inboxFilter(scope: Scope): { organizationId?: string; id?: { in: string[] } } {
  return {
    ...(scope.organizationId !== undefined && { organizationId: scope.organizationId }),
    ...(scope.inboxIds !== undefined && { id: { in: [...scope.inboxIds] } }),
  };
}

/**
 * The organization a new inbox or key goes to: the one named, which must be within the scope
 * (404 otherwise, as if it did not exist); unnamed, the caller's own, or `default` for operators.
 */
export function organizationFor(scope: Scope, requested: string | undefined): string {
  if (requested === undefined) return scope.organizationId ?? DEFAULT_ORGANIZATION_ID;
  if (!canReachOrganization(scope, requested)) throw organizationNotFound(requested);
  return requested;
}

export function organizationNotFound(organizationId: string): NotFoundError {
  return new NotFoundError('Organization not found', { organization_id: organizationId });
}

/** 403 when the key reaches only some inboxes: a new inbox would be outside what it can see. */
export function requireWholeOrganization(scope: Scope): void {
  if (scope.inboxIds !== undefined) {
    throw new ForbiddenError('This API key is limited to some inboxes: only a key for the whole organization may create inboxes');
  }
}

/** A key as another key sees it: its organization and the inboxes it is limited to (absent: all). */
export interface KeyScope {
  organizationId: string;
  inboxIds?: readonly string[];
}

/** Whether a caller of `scope` can see (list, revoke) a key of `target`: one that reaches nothing it cannot reach. */
export function canReachKey(scope: Scope, target: KeyScope): boolean {
  if (!canReachOrganization(scope, target.organizationId)) return false;
  if (scope.inboxIds === undefined) return true;
  const allowed = scope.inboxIds;
  return target.inboxIds !== undefined && target.inboxIds.every((id) => allowed.includes(id));
}

/** A key to create, as asked for (its organization and inboxes already checked to be within reach). */
export interface RequestedKey {
  inboxIds?: readonly string[];
  permissions: readonly Permission[];
  rateLimitPerMinute?: number | null;
  sendLimitPerHour?: number | null;
}

/**
 * The limits a new key gets, refusing one broader than its creator's (403): an API key can
 * create keys only with permissions it has, limited to inboxes it can reach (one for its whole
 * organization only when it is one), and with request and send limits no higher than its own
 * (0, no limit, is the highest). Limits left out are the creator's own. Operators may create
 * any key. `defaults` are the service's settings, which limits set to null follow.
 */
export function limitsOfNewKey(
  creator: Actor,
  requested: RequestedKey,
  defaults: { perMinute: number; sendsPerHour: number },
): KeyLimits {
  if (creator.kind !== 'key') {
    return { rateLimitPerMinute: requested.rateLimitPerMinute ?? null, sendLimitPerHour: requested.sendLimitPerHour ?? null };
  }
  const missing = requested.permissions.filter((permission) => !creator.permissions.has(permission));
  if (missing.length > 0) throw new ForbiddenError(`A key cannot grant permissions it lacks: ${missing.join(', ')}`);
  if (creator.scope.inboxIds !== undefined && requested.inboxIds === undefined) {
    throw new ForbiddenError('A key limited to some inboxes can only create keys limited to some of them: give inbox_ids');
  }
  const limits: KeyLimits = {
    rateLimitPerMinute:
      requested.rateLimitPerMinute === undefined ? creator.limits.rateLimitPerMinute : requested.rateLimitPerMinute,
    sendLimitPerHour: requested.sendLimitPerHour === undefined ? creator.limits.sendLimitPerHour : requested.sendLimitPerHour,
  };
  const over = (key: keyof KeyLimits, fallback: number) =>
    atMost(effectiveLimit(limits[key], fallback), effectiveLimit(creator.limits[key], fallback)) ? [] : [key];
  const broader = [...over('rateLimitPerMinute', defaults.perMinute), ...over('sendLimitPerHour', defaults.sendsPerHour)];
  if (broader.length > 0) {
    throw new ForbiddenError(`A key cannot create a key with higher limits than its own: ${broader.map(wireName).join(', ')}`);
  }
  return limits;
}

const wireName = (key: keyof KeyLimits) => (key === 'rateLimitPerMinute' ? 'rate_limit_per_minute' : 'send_limit_per_hour');

/** The limit that applies: the key's own, else the service's; 0 means none. */
export function effectiveLimit(own: number | null, fallback: number): number {
  return own ?? fallback;
}

/** Whether limit `a` allows no more than `b` does (0 allows everything). */
function atMost(a: number, b: number): boolean {
  if (b === 0) return true;
  return a !== 0 && a <= b;
}
