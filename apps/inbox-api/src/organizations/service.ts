import { ConflictError } from '@repo/errors';
import { isForeignKeyViolation } from '@repo/db';
import {
  canReachOrganization,
  DEFAULT_ORGANIZATION_ID,
  organizationNotFound,
  requireWholeOrganization,
  type Scope,
} from '../api-keys/scope.js';
import type { KeyDirectory } from '../api-keys/directory.js';
import type { Database } from '../database.js';
import type { Organization } from '../generated/prisma/client.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import type { CreateOrganizationInput, OrganizationResponse, UpdateOrganizationInput } from './schemas.js';

export function toOrganizationResponse(organization: Organization): OrganizationResponse {
  return {
    id: organization.id,
    name: organization.name,
    sending_enabled: organization.sendingEnabled,
    created_at: organization.createdAt.toISOString(),
  };
}

/** Organization ids are UUIDs, or `default`: any other string cannot name one. */
function isOrganizationId(value: string): boolean {
  return value === DEFAULT_ORGANIZATION_ID || isUuid(value);
}

export async function createOrganization(db: Database, input: CreateOrganizationInput): Promise<OrganizationResponse> {
  return toOrganizationResponse(await db.organization.create({ data: { name: input.name } }));
}

/** The organization, or 404 when it does not exist or is outside the scope. */
export async function findOrganization(db: Database, scope: Scope, organizationId: string): Promise<Organization> {
  const organization =
    isOrganizationId(organizationId) && canReachOrganization(scope, organizationId)
      ? await db.organization.findUnique({ where: { id: organizationId } })
      : null;
  if (!organization) throw organizationNotFound(organizationId);
  return organization;
}

/**
 * Changes an organization's name or kill switch (within the scope: 404 otherwise; a key limited
 * to some inboxes cannot, 403: the change reaches inboxes beyond it).
 */
export async function updateOrganization(
  db: Database,
  scope: Scope,
  organizationId: string,
  input: UpdateOrganizationInput,
): Promise<OrganizationResponse> {
  await findOrganization(db, scope, organizationId);
  requireWholeOrganization(scope);
  const data = {
    ...(input.name !== undefined && { name: input.name }),
    ...(input.sending_enabled !== undefined && { sendingEnabled: input.sending_enabled }),
  };
  const [updated] = await db.organization.updateManyAndReturn({ where: { id: organizationId }, data });
  if (!updated) throw organizationNotFound(organizationId);
  return toOrganizationResponse(updated);
}

/** Newest first; an API key sees its own organization only. */
export async function listOrganizations(
  db: Database,
  scope: Scope,
  options: { limit: number; offset: number; page_token?: string },
): Promise<Page<OrganizationResponse>> {
  const where = scope.organizationId === undefined ? {} : { id: scope.organizationId };
  const { rows, total, next } = await readPage(
    options,
    'organizations',
    // An organization's id is a UUID or `default`.
    { fields: NEWEST_FIRST.fields, shape: ['date', 'string'] },
    (after, take, skip) =>
      db.organization.findMany({ where: { AND: [where, after] }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take, skip }),
    () => db.organization.count({ where }),
  );
  return page(rows.map(toOrganizationResponse), total, next);
}

/**
 * Deletes an organization that has no inboxes (409 while it has any, also one being deleted,
 * and always for `default`), with its API keys, which this replica stops accepting at once and
 * others within the key cache period. The organization's row is locked first: an inbox or key
 * being created in it either commits before (and the delete answers 409) or fails after (404).
 */
export async function deleteOrganization(deps: { db: Database; apiKeys: KeyDirectory }, organizationId: string): Promise<void> {
  if (organizationId === DEFAULT_ORGANIZATION_ID) {
    throw new ConflictError('The default organization cannot be deleted', { organization_id: organizationId });
  }
  if (!isOrganizationId(organizationId)) throw organizationNotFound(organizationId);
  try {
    await deps.db.$transaction(async (tx) => {
      const [locked] = await tx.$queryRaw<unknown[]>`SELECT 1 FROM organizations WHERE id = ${organizationId} FOR UPDATE`;
      if (!locked) throw organizationNotFound(organizationId);
      if ((await tx.inbox.count({ where: { organizationId } })) > 0) throw hasInboxes(organizationId);
      await tx.organization.delete({ where: { id: organizationId } });
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw hasInboxes(organizationId);
    throw error;
  }
  deps.apiKeys.forget({ organizationId });
}

function hasInboxes(organizationId: string): ConflictError {
  return new ConflictError('The organization still has inboxes: delete them first', { organization_id: organizationId });
}
