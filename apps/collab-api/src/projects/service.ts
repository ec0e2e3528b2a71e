import { ConflictError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import { findReachableProject, projectNotOwned, reachableProjects } from '../associations/access.js';
import type { Database, Transaction } from '../database.js';
import type { Project } from '../generated/prisma/client.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { lockLive, type ParentLock } from '../shared/transaction.js';
import { inTurn, requireNoChangeUnderWay } from '../warehouse-changes/index.js';
import type { ProjectResponse, UpdateProjectInput } from './schemas.js';

function toProjectResponse(project: Project): ProjectResponse {
  return {
    id: project.id,
    tenant_id: project.tenantId,
    name: project.name,
    description: project.description,
    created_at: iso(project.createdAt),
    archived_at: isoOrNull(project.archivedAt),
  };
}

export async function createProject(
  db: Database,
  actor: Actor,
  input: { name: string; description?: string | null },
): Promise<ProjectResponse> {
  const project = await db.project.create({
    data: { tenantId: actor.tenantId, name: input.name, description: input.description ?? null },
  });
  return toProjectResponse(project);
}

/** The tenant's own projects and those it was invited to (each with its own tenant_id). */
export async function listProjects(db: Database, actor: Actor, page: ListOptions): Promise<{ projects: ProjectResponse[] }> {
  const projects = await db.project.findMany({ where: reachableProjects(actor.tenantId), ...oldestFirst(page) });
  return { projects: projects.map(toProjectResponse) };
}

/** A project of the tenant, or one it was invited to. */
export async function getProject(db: Database, actor: Actor, projectId: string): Promise<ProjectResponse> {
  return toProjectResponse((await findReachableProject(db, actor, projectId)).project);
}

/** Renames or describes the project, read under lock: a project archived meanwhile is 404, never answered archived. */
export function updateProject(
  db: Database,
  actor: Actor,
  projectId: string,
  input: UpdateProjectInput,
): Promise<ProjectResponse> {
  return db.$transaction(async (tx) => {
    const project = await findProject(tx, actor, projectId, 'update');
    const updated = await tx.project.update({
      where: { id: project.id },
      data: { name: input.name ?? undefined, description: input.description },
    });
    return toProjectResponse(updated);
  });
}

/**
 * Archives the project. Refused (409) while it has datasets: deleting them one by one keeps each
 * warehouse deletion with its own record; and while agents are assigned to it. Waits for the
 * warehouse changes of datasets that rely on the project (created in it, moved into or out of
 * it), whose outcome decides whether it has any.
 */
export function archiveProject(db: Database, actor: Actor, projectId: string): Promise<void> {
  return inTurn(db, 'A change of a dataset of this project', async (tx) => {
    const project = await findProject(tx, actor, projectId, 'update');
    await requireNoChangeUnderWay(tx, { changing: project.id });
    const datasets = await tx.dataset.count({ where: { projectId: project.id, ...liveIn(actor) } });
    if (datasets > 0) {
      throw new ConflictError(`The project still has ${datasets} dataset(s); delete them first`);
    }
    // Assigning an agent holds the project (FOR SHARE), so none is assigned while this counts.
    const agents = await tx.projectAgent.count({ where: { projectId: project.id, ...liveIn(actor) } });
    if (agents > 0) throw new ConflictError(`The project still has ${agents} agent(s); remove them first`);
    await tx.project.update({ where: { id: project.id }, data: { archivedAt: new Date() } });
  });
}

/**
 * The live project of the actor's tenant, to change it or add to it: 403 for a project the tenant
 * was only invited to, 404 otherwise; with `lock`, held until the transaction `db` ends.
 */
export async function findProject(
  db: Database | Transaction,
  actor: Actor,
  projectId: string,
  lock?: ParentLock,
): Promise<Project> {
  if (lock) await lockLive(db, 'projects', actor, projectId, lock);
  const project = await db.project.findFirst({ where: { id: projectId, ...liveIn(actor) } });
  if (!project) throw await projectNotOwned(db, actor, projectId);
  return project;
}
