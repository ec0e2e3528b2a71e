/**
 * The rules of approval requests, as pure functions: their lifetime, their states and the
 * transitions between them, who sees and who decides them. Each throws the error the API
 * answers with when the rule is broken: 409 for a state that forbids the action, 403 for a
 * caller who sees the request but may not decide it, 404 for one who may not see it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '@repo/errors';
import type { Actor } from '../access/index.js';
import type { ApprovalKind, ApprovalStatus } from '../generated/prisma/enums.js';

/** A pending request expires this long after it was made. */
export const APPROVAL_LIFETIME_DAYS = 15;
const DAY_MS = 86_400_000;

export function expiryOf(createdAt: Date): Date {
  return new Date(createdAt.getTime() + APPROVAL_LIFETIME_DAYS * DAY_MS);
}

/** What an Org admin does with a request. */
export type Decision = 'approve' | 'reject';

/** The state a rule needs of a request. */
export interface RequestState {
  status: ApprovalStatus;
  expiresAt: Date;
}

/** Whether a request's time is up at `now` (whether or not the expiry run has marked it yet). */
export function isDue(request: Pick<RequestState, 'expiresAt'>, now: Date): boolean {
  return request.expiresAt.getTime() <= now.getTime();
}

/** The status a request shows at `now`: a pending one whose time is up is expired, marked yet or not. */
export function statusAt(request: RequestState, now: Date): ApprovalStatus {
  return request.status === 'pending' && isDue(request, now) ? 'expired' : request.status;
}

const ENDED: Record<Exclude<ApprovalStatus, 'pending'>, string> = {
  approved: 'The request was already approved',
  rejected: 'The request was already rejected',
  expired: 'The request has expired; create a new request',
};

/**
 * The status a decision moves a request to at `now`: only a pending request whose time still
 * runs moves, to approved or rejected. Anything else is a 409 saying why. (A pending request
 * whose time is up moves only to expired, by the expiry run: `expiring`.)
 */
export function decide(request: RequestState, decision: Decision, now: Date): ApprovalStatus {
  if (request.status !== 'pending') throw new ConflictError(ENDED[request.status]);
  if (isDue(request, now)) throw new ConflictError(ENDED.expired);
  return decision === 'approve' ? 'approved' : 'rejected';
}

/** The requests the expiry run moves to expired at `now`: those pending whose time is up. */
export function expiring(now: Date) {
  return { status: 'pending' as const, expiresAt: { lte: now } };
}

/** The association a request asks for, as its `pending_key`: one pending request per key. */
export function associationKey(kind: ApprovalKind, projectId: string, targetId: string): string {
  return `${kind}:${projectId}:${targetId}`;
}

/** The tenants a request concerns. */
export interface RequestParties {
  requesterTenantId: string;
  /** The invited tenant, or the dataset's owning tenant: its Org admins decide. */
  reviewerTenantId: string;
}

/**
 * Details of a request: Org admins (the route checks the role) of the tenant that decides it or
 * of the tenant that asked; any other tenant gets 404, as for a request that does not exist.
 */
export function requireVisible(actor: Actor, request: RequestParties): void {
  if (actor.tenantId !== request.reviewerTenantId && actor.tenantId !== request.requesterTenantId) {
    throw new NotFoundError('Approval request not found');
  }
}

/**
 * Approving or rejecting: Org admins (the route checks the role) of the tenant that decides; the
 * asking tenant sees the request (403), others do not (404).
 */
export function requireReviewer(actor: Actor, request: RequestParties): void {
  requireVisible(actor, request);
  if (actor.tenantId !== request.reviewerTenantId) {
    throw new ForbiddenError('Only an Org admin of the tenant the request is addressed to may decide it');
  }
}

/** Inviting a tenant to a project: never the project's own tenant. */
export function requireOtherTenant(projectTenantId: string, invitedTenantId: string): void {
  if (projectTenantId === invitedTenantId) {
    throw new ConflictError("The tenant owns the project: a project's own tenant needs no invitation");
  }
}

/** Adding a dataset to a project: only another tenant's (the project's own tenant moves its datasets instead). */
export function requireForeignDataset(projectTenantId: string, datasetTenantId: string): void {
  if (projectTenantId === datasetTenantId) {
    throw new ConflictError("The dataset belongs to the project's own tenant: move it into the project instead of requesting it");
  }
}

/**
 * The internal expiry operation's token, compared in constant time (as digests, so that the
 * length of the configured token does not show either). Unset, every call is refused.
 */
export function requireInternalToken(configured: string | undefined, given: string | undefined): void {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  if (configured === undefined || given === undefined || !timingSafeEqual(digest(configured), digest(given))) {
    throw new UnauthorizedError('A valid internal_token is required');
  }
}
