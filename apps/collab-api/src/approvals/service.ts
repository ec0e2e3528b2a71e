import { ConflictError, NotFoundError } from '@repo/errors';
import { type Actor, Role } from '../access/index.js';
import { findReachableProject } from '../associations/access.js';
import type { Database, Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import type { ApprovalRequest, Prisma } from '../generated/prisma/client.js';
import type { ApprovalKind } from '../generated/prisma/enums.js';
import { findProject } from '../projects/service.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { lockLive } from '../shared/transaction.js';
import type { MailEvent } from './mail.js';
import {
  associationKey,
  decide,
  type Decision,
  expiring,
  expiryOf,
  requireForeignDataset,
  requireInternalToken,
  requireOtherTenant,
  requireReviewer,
  requireVisible,
  statusAt,
} from './rules.js';
import type { ApprovalDetails, ProjectDatasetApproval, ProjectTenantApproval } from './schemas.js';

/** What the approvals need of the app. */
export type ApprovalDeps = Pick<Deps, 'db' | 'queue' | 'now' | 'config'>;

/** The names a request is shown with. */
const WITH_NAMES = {
  requester: { select: { name: true, email: true } },
  project: { select: { name: true } },
  reviewerTenant: { select: { name: true } },
  dataset: { select: { name: true } },
} satisfies Prisma.ApprovalRequestInclude;

type NamedRequest = Prisma.ApprovalRequestGetPayload<{ include: typeof WITH_NAMES }>;

function approvalOf(request: NamedRequest): ApprovalDetails['approval'] {
  return {
    id: request.id,
    status: request.status,
    requested_by: request.requestedBy,
    reviewed_by: request.reviewedBy,
    created_at: iso(request.createdAt),
    expires_at: iso(request.expiresAt),
    reviewed_at: isoOrNull(request.reviewedAt),
    rejection_reason: request.rejectionReason,
  };
}

function requesterOf(request: NamedRequest) {
  return {
    project_id: request.projectId,
    project_name: request.project.name,
    requester_name: request.requester.name,
    requester_email: request.requester.email,
  };
}

function tenantDetailsOf(request: NamedRequest) {
  return { ...requesterOf(request), tenant_id: request.reviewerTenantId, tenant_name: request.reviewerTenant.name };
}

function datasetDetailsOf(request: NamedRequest) {
  return { ...requesterOf(request), dataset_id: request.datasetId!, dataset_name: request.dataset!.name };
}

function toProjectTenantApproval(request: NamedRequest): ProjectTenantApproval {
  return { ...approvalOf(request), ...tenantDetailsOf(request) };
}

function toProjectDatasetApproval(request: NamedRequest): ProjectDatasetApproval {
  return { ...approvalOf(request), ...datasetDetailsOf(request) };
}

interface NewRequest {
  kind: ApprovalKind;
  projectId: string;
  projectTenantId: string;
  reviewerTenantId: string;
  dataset?: { id: string; tenantId: string };
}

/**
 * Records a pending request and queues its e-mail to every Org admin of the deciding tenant, in
 * one transaction. The unique `pending_key` refuses a second pending request for the same
 * association, however many arrive at once; one whose 15 days are over is marked expired first,
 * as the expiry run would. The association is looked for after the insert: an
 * approval that made it commits before the insert can take the key it held, so either this
 * transaction sees its association or it waited for nothing.
 */
async function addRequest(
  deps: ApprovalDeps,
  tx: Transaction,
  actor: Actor,
  request: NewRequest,
  association: { exists: () => Promise<boolean>; message: string },
): Promise<NamedRequest> {
  const now = deps.now();
  const targetId = request.dataset?.id ?? request.reviewerTenantId;
  const pendingKey = associationKey(request.kind, request.projectId, targetId);
  // A request whose time is up no longer holds the association, even before the expiry run marks it.
  await tx.approvalRequest.updateMany({ where: { ...expiring(now), pendingKey }, data: { status: 'expired', pendingKey: null } });
  const created = await conflictOnDuplicate(
    tx.approvalRequest.create({
      data: {
        kind: request.kind,
        requestedBy: actor.userId,
        requesterTenantId: actor.tenantId,
        projectId: request.projectId,
        projectTenantId: request.projectTenantId,
        reviewerTenantId: request.reviewerTenantId,
        datasetId: request.dataset?.id,
        datasetTenantId: request.dataset?.tenantId,
        createdAt: now,
        expiresAt: expiryOf(now),
        pendingKey,
      },
      include: WITH_NAMES,
    }),
    ['pending_key'],
    'A pending request for this association already exists',
  );
  if (await association.exists()) throw new ConflictError(association.message);
  const admins = await tx.user.findMany({
    where: { tenantId: request.reviewerTenantId, role: Role.OrgAdmin, archivedAt: null },
    select: { id: true },
  });
  for (const admin of admins) await queueMail(deps, tx, created.id, 'created', admin.id);
  return created;
}

function queueMail(deps: ApprovalDeps, tx: Transaction, approvalId: string, event: MailEvent, recipientId: string) {
  return deps.queue.send('approval-mail', { approval_id: approvalId, event, recipient_id: recipientId }, { tx });
}

/** Asks the Org admins of `tenantId` to let their tenant into a project of the actor's tenant (any role may ask). */
export async function requestProjectTenant(
  deps: ApprovalDeps,
  actor: Actor,
  input: { project_id: string; tenant_id: string },
): Promise<ProjectTenantApproval> {
  const created = await deps.db.$transaction(async (tx) => {
    const project = await findProject(tx, actor, input.project_id);
    const tenant = await tx.tenant.findFirst({ where: { id: input.tenant_id, archivedAt: null }, select: { id: true } });
    if (!tenant) throw new NotFoundError('Tenant not found');
    requireOtherTenant(project.tenantId, tenant.id);
    return addRequest(
      deps,
      tx,
      actor,
      { kind: 'project_tenant', projectId: project.id, projectTenantId: project.tenantId, reviewerTenantId: tenant.id },
      {
        exists: async () => (await tx.projectTenant.count({ where: { projectId: project.id, tenantId: tenant.id } })) > 0,
        message: 'The tenant is already associated with this project',
      },
    );
  });
  deps.queue.wake('approval-mail');
  return toProjectTenantApproval(created);
}

/**
 * Asks the Org admins of a dataset's tenant to add the dataset to a project the actor's tenant
 * reaches (its own, or one it was invited to). The project must already be associated with the
 * dataset's tenant (409 otherwise).
 */
export async function requestProjectDataset(
  deps: ApprovalDeps,
  actor: Actor,
  input: { project_id: string; dataset_id: string },
): Promise<ProjectDatasetApproval> {
  const created = await deps.db.$transaction(async (tx) => {
    const { project } = await findReachableProject(tx, actor, input.project_id);
    const dataset = await tx.dataset.findFirst({
      where: { id: input.dataset_id, archivedAt: null },
      select: { id: true, tenantId: true },
    });
    if (!dataset) throw new NotFoundError('Dataset not found');
    requireForeignDataset(project.tenantId, dataset.tenantId);
    const invited = await tx.projectTenant.count({ where: { projectId: project.id, tenantId: dataset.tenantId } });
    if (invited === 0) {
      throw new ConflictError(
        "The project is not associated with the dataset's tenant: a project-tenant request for that tenant must be approved first",
      );
    }
    return addRequest(
      deps,
      tx,
      actor,
      {
        kind: 'project_dataset',
        projectId: project.id,
        projectTenantId: project.tenantId,
        reviewerTenantId: dataset.tenantId,
        dataset,
      },
      {
        exists: async () => (await tx.projectDataset.count({ where: { projectId: project.id, datasetId: dataset.id } })) > 0,
        message: 'The dataset is already shared with this project',
      },
    );
  });
  deps.queue.wake('approval-mail');
  return toProjectDatasetApproval(created);
}

/** The pending requests addressed to the actor's tenant (Org admins; the route checks the role), oldest first. */
export async function listPending(
  deps: ApprovalDeps,
  actor: Actor,
  page: ListOptions,
): Promise<{ project_tenant_approvals: ProjectTenantApproval[]; project_dataset_approvals: ProjectDatasetApproval[] }> {
  const now = deps.now();
  const pendingOf = (kind: ApprovalKind) =>
    deps.db.approvalRequest.findMany({
      where: {
        reviewerTenantId: actor.tenantId,
        kind,
        status: 'pending',
        expiresAt: { gt: now },
        // A request of an archived tenant, into a deleted project (or its tenant's), or for a deleted
        // dataset can no longer be approved (liveProject, approveDataset): not the reviewer's to decide.
        project: { archivedAt: null, tenant: { archivedAt: null } },
        requester: { tenant: { archivedAt: null } },
        OR: [{ datasetId: null }, { dataset: { archivedAt: null } }],
      },
      include: WITH_NAMES,
      ...oldestFirst(page),
    });
  return {
    project_tenant_approvals: (await pendingOf('project_tenant')).map(toProjectTenantApproval),
    project_dataset_approvals: (await pendingOf('project_dataset')).map(toProjectDatasetApproval),
  };
}

/**
 * The requests the actor made, newest first, in every state; a pending one whose time is over
 * shows as expired (the hourly sweep has not marked it yet).
 */
export async function listMine(
  deps: ApprovalDeps,
  actor: Actor,
  page: ListOptions,
): Promise<{ project_tenant_approvals: ProjectTenantApproval[]; project_dataset_approvals: ProjectDatasetApproval[] }> {
  const now = deps.now();
  const mineOf = (kind: ApprovalKind) =>
    deps.db.approvalRequest.findMany({
      where: { requestedBy: actor.userId, requesterTenantId: actor.tenantId, kind },
      include: WITH_NAMES,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: page.skip,
      take: page.limit,
    });
  const asOfNow = (request: NamedRequest): NamedRequest => ({ ...request, status: statusAt(request, now) });
  return {
    project_tenant_approvals: (await mineOf('project_tenant')).map(asOfNow).map(toProjectTenantApproval),
    project_dataset_approvals: (await mineOf('project_dataset')).map(asOfNow).map(toProjectDatasetApproval),
  };
}

/** A request, for Org admins of the tenant that decides it or of the tenant that asked (404 for others). */
export async function getApprovalDetails(db: Database, actor: Actor, approvalId: string): Promise<ApprovalDetails> {
  const request = await db.approvalRequest.findUnique({ where: { id: approvalId }, include: WITH_NAMES });
  if (!request) throw new NotFoundError('Approval request not found');
  requireVisible(actor, request);
  return {
    approval: approvalOf(request),
    project_tenant_details: request.kind === 'project_tenant' ? tenantDetailsOf(request) : null,
    project_dataset_details: request.kind === 'project_dataset' ? datasetDetailsOf(request) : null,
  };
}

/**
 * Approves a pending request (an Org admin of the tenant it is addressed to) and makes its
 * association in the same transaction, with the request's row locked: of two decisions at once,
 * the second finds it decided (409). The requester's e-mail is queued with it.
 */
export function approve(deps: ApprovalDeps, actor: Actor, approvalId: string): Promise<Record<string, never>> {
  return decideRequest(deps, actor, approvalId, 'approve', async (tx, request) => {
    const project = await liveProject(tx, request);
    if (request.kind === 'project_tenant') {
      await tx.projectTenant.create({
        data: {
          projectId: project.id,
          ownerTenantId: project.tenantId,
          tenantId: request.reviewerTenantId,
          approvalId: request.id,
        },
      });
      return;
    }
    const dataset = { id: request.datasetId!, tenantId: request.datasetTenantId! };
    // Held until the commit, so that the invitation the shared dataset relies on stays meanwhile.
    const invited = await tx.$queryRaw<unknown[]>`SELECT 1 FROM project_tenants
      WHERE project_id = ${project.id}::uuid AND tenant_id = ${dataset.tenantId}::uuid FOR SHARE`;
    if (invited.length === 0) {
      throw new ConflictError("The project is no longer associated with the dataset's tenant; the request cannot be approved");
    }
    await lockLive(tx, 'datasets', { tenantId: dataset.tenantId }, dataset.id, 'share');
    if ((await tx.dataset.count({ where: { id: dataset.id, archivedAt: null } })) === 0) {
      throw new ConflictError('The dataset was deleted; the request cannot be approved');
    }
    await tx.projectDataset.create({
      data: { projectId: project.id, tenantId: dataset.tenantId, datasetId: dataset.id, approvalId: request.id },
    });
  });
}

/** Rejects a pending request (an Org admin of the tenant it is addressed to), with an optional reason for the requester. */
export function reject(
  deps: ApprovalDeps,
  actor: Actor,
  approvalId: string,
  reason: string | null,
): Promise<Record<string, never>> {
  return decideRequest(deps, actor, approvalId, 'reject', () => Promise.resolve(), reason);
}

async function decideRequest(
  deps: ApprovalDeps,
  actor: Actor,
  approvalId: string,
  decision: Decision,
  effect: (tx: Transaction, request: ApprovalRequest) => Promise<void>,
  rejectionReason: string | null = null,
): Promise<Record<string, never>> {
  await deps.db.$transaction(async (tx) => {
    const request = await lockRequest(tx, approvalId);
    requireReviewer(actor, request);
    const now = deps.now();
    const status = decide(request, decision, now);
    await effect(tx, request);
    await tx.approvalRequest.update({
      where: { id: request.id },
      data: { status, reviewedBy: actor.userId, reviewedAt: now, rejectionReason, pendingKey: null },
    });
    await queueMail(deps, tx, request.id, decision === 'approve' ? 'approved' : 'rejected', request.requestedBy);
  });
  deps.queue.wake('approval-mail');
  return {};
}

/** The request, locked until the transaction ends (404 when there is none). */
async function lockRequest(tx: Transaction, approvalId: string): Promise<ApprovalRequest> {
  await tx.$queryRaw`SELECT 1 FROM approval_requests WHERE id = ${approvalId}::uuid FOR UPDATE`;
  const request = await tx.approvalRequest.findUnique({ where: { id: approvalId } });
  if (!request) throw new NotFoundError('Approval request not found');
  return request;
}

/**
 * The request's project, held live until the commit, with the tenants that own it and asked for
 * the association (409 when either was deleted meanwhile: a deleted tenant's requests are void).
 */
async function liveProject(tx: Transaction, request: ApprovalRequest) {
  const tenants = [...new Set([request.projectTenantId, request.requesterTenantId])];
  const live = await tx.$queryRaw<unknown[]>`SELECT 1 FROM tenants
    WHERE id = ANY(${tenants}::uuid[]) AND archived_at IS NULL FOR SHARE`;
  if (live.length < tenants.length) {
    throw new ConflictError('The organisation that asked, or that owns the project, was deleted; the request cannot be approved');
  }
  await lockLive(tx, 'projects', { tenantId: request.projectTenantId }, request.projectId, 'share');
  const project = await tx.project.findFirst({ where: { id: request.projectId, archivedAt: null } });
  if (!project) throw new ConflictError('The project was deleted; the request cannot be approved');
  return project;
}

/**
 * Marks the pending requests whose 15 days are over as expired (the worker's hourly run, or an
 * operator's through the internal operation). Running it again changes nothing more.
 * Answers how many it expired.
 */
export async function expireApprovals(deps: Pick<ApprovalDeps, 'db' | 'now'>): Promise<number> {
  const { count } = await deps.db.approvalRequest.updateMany({
    where: expiring(deps.now()),
    data: { status: 'expired', pendingKey: null },
  });
  return count;
}

/** The internal expiry operation: an operator's run, authorized by COLLAB_INTERNAL_TOKEN (401 otherwise). */
export async function expireByOperator(
  deps: Pick<ApprovalDeps, 'db' | 'now' | 'config'>,
  token: string | undefined,
): Promise<Record<string, never>> {
  requireInternalToken(deps.config.COLLAB_INTERNAL_TOKEN, token);
  await expireApprovals(deps);
  return {};
}
