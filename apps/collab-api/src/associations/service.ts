import { NotFoundError } from '@repo/errors';
import type { Actor } from '../access/index.js';
import type { Database } from '../database.js';
import { iso, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { findReachableProject } from './access.js';
import type { ProjectTenantResponse } from './schemas.js';

/**
 * The tenants invited to a project the actor's tenant reaches, oldest first: all of them for the
 * project's own tenant; an invited tenant sees only its own invitation, and nothing of the others.
 */
export async function listProjectTenants(
  db: Database,
  actor: Actor,
  projectId: string,
  page: ListOptions,
): Promise<{ tenants: ProjectTenantResponse[] }> {
  const { project, owned } = await findReachableProject(db, actor, projectId);
  const associations = await db.projectTenant.findMany({
    where: { projectId: project.id, ...(owned ? {} : { tenantId: actor.tenantId }) },
    include: { tenant: { select: { name: true } } },
    ...oldestFirst(page),
  });
  return {
    tenants: associations.map((association) => ({
      project_id: association.projectId,
      tenant_id: association.tenantId,
      tenant_name: association.tenant.name,
      created_at: iso(association.createdAt),
    })),
  };
}

/**
 * Ends a tenant's invitation to a project (an Org admin of the project's tenant or of the invited
 * one; the route checks the role): its users no longer reach the project, and the datasets it
 * shared into the project leave it (the database's cascade), from the next request on.
 */
export async function removeProjectTenant(db: Database, actor: Actor, projectId: string, tenantId: string): Promise<void> {
  const removed = await db.projectTenant.deleteMany({
    where: {
      projectId,
      tenantId,
      project: { archivedAt: null },
      OR: [{ ownerTenantId: actor.tenantId }, { tenantId: actor.tenantId }],
    },
  });
  if (removed.count === 0) throw new NotFoundError('The tenant is not associated with this project');
}

/**
 * Takes a shared dataset out of a project (an Org admin of the project's tenant or of the
 * dataset's): the project's queries no longer read it, from the next query on.
 */
export async function removeSharedDataset(db: Database, actor: Actor, projectId: string, datasetId: string): Promise<void> {
  const removed = await db.projectDataset.deleteMany({
    where: {
      projectId,
      datasetId,
      projectTenant: { project: { archivedAt: null } },
      OR: [{ tenantId: actor.tenantId }, { projectTenant: { ownerTenantId: actor.tenantId } }],
    },
  });
  if (removed.count === 0) throw new NotFoundError('The dataset is not shared with this project');
}
