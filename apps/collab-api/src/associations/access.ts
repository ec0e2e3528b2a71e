/**
 * What cross-tenant associations open up, for every feature that reads across tenants: a tenant
 * invited to a project (project_tenants) reaches it as its own for reading and running queries;
 * a dataset added to a project (project_datasets) is readable by the project's queries. The
 * project's own tenant alone changes the project; a dataset's own tenant alone changes it.
 * Archived projects and datasets are reached by nobody, whatever their associations; nor are the
 * projects and datasets of an archived tenant (its records stay, and no other tenant reads them).
 */
import { ForbiddenError, NotFoundError } from '@repo/errors';
import type { Actor } from '../access/index.js';
import type { Database, Transaction } from '../database.js';
import { type Dataset, Prisma, type Project } from '../generated/prisma/client.js';

/** The filter of the live projects `tenantId` reaches: its own and those it was invited to. */
export function reachableProjects(tenantId: string): Prisma.ProjectWhereInput {
  return { archivedAt: null, tenant: { archivedAt: null }, OR: [{ tenantId }, { tenants: { some: { tenantId } } }] };
}

/** reachableProjects in SQL, for statements that read more beside: whether the project `projectId` is live and `tenantId` reaches it. */
export function isReachableSql(projectId: Prisma.Sql, tenantId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM projects p
                     WHERE p.id = ${projectId} AND p.archived_at IS NULL AND ${isLiveTenantSql(Prisma.sql`p.tenant_id`)}
                       AND (p.tenant_id = ${tenantId}
                            OR EXISTS (SELECT 1 FROM project_tenants pt WHERE pt.project_id = p.id AND pt.tenant_id = ${tenantId})))`;
}

/** Whether the tenant `tenantId` (a column) is live: not archived by the platform operator. */
function isLiveTenantSql(tenantId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM tenants t WHERE t.id = ${tenantId} AND t.archived_at IS NULL)`;
}

/** A project the actor's tenant reaches, and whether it is the project's own tenant. */
export interface ReachedProject {
  project: Project;
  /** The actor's tenant owns the project (false: it was invited to it). */
  owned: boolean;
}

/** The live project the actor's tenant owns or was invited to; 404 otherwise. */
export async function findReachableProject(
  db: Database | Transaction,
  actor: Pick<Actor, 'tenantId'>,
  projectId: string,
): Promise<ReachedProject> {
  const project = await db.project.findFirst({ where: { id: projectId, ...reachableProjects(actor.tenantId) } });
  if (!project) throw new NotFoundError('Project not found');
  return { project, owned: project.tenantId === actor.tenantId };
}

/** Whether `tenantId` was invited to the live project `projectId` (and does not own it). */
export async function isInvitedTo(db: Database | Transaction, tenantId: string, projectId: string): Promise<boolean> {
  const association = await db.projectTenant.findFirst({
    where: { projectId, tenantId, project: { archivedAt: null, tenant: { archivedAt: null } } },
    select: { id: true },
  });
  return association !== null;
}

/**
 * For a write to a project that `findProject` (own tenant only) did not find: 403 when the
 * actor's tenant was invited to it, since it sees the project but may not change it; 404 otherwise.
 */
export async function projectNotOwned(db: Database | Transaction, actor: Pick<Actor, 'tenantId'>, projectId: string) {
  return (await isInvitedTo(db, actor.tenantId, projectId))
    ? new ForbiddenError(
        'This project belongs to another tenant: an invited tenant may read it and run queries in it, and change nothing',
      )
    : new NotFoundError('Project not found');
}

/** The filter of the live datasets listed in a project: its own tenant's, and those added to it by approval. */
export function datasetsOfProject(projectId: string): Prisma.DatasetWhereInput {
  return { archivedAt: null, tenant: { archivedAt: null }, OR: [{ projectId }, { sharedTo: { some: { projectId } } }] };
}

/**
 * The filter of the live datasets of other tenants that a live project `tenantId` reaches (its
 * own, or one it was invited to) lets its queries read: those shared into it, and the project's
 * own datasets for a tenant invited to it. Their schemas and rules are its to see, never their data.
 */
export function sharedWith(tenantId: string): Prisma.DatasetWhereInput {
  return {
    archivedAt: null,
    tenant: { archivedAt: null },
    OR: [
      { sharedTo: { some: { projectTenant: { project: reachableProjects(tenantId) } } } },
      { project: reachableProjects(tenantId) },
    ],
  };
}

/** datasetsOfProject in SQL, for statements that read more beside: whether the dataset `datasetAlias` is live and listed in project `projectId`. */
export function isDatasetOfProjectSql(datasetAlias: Prisma.Sql, projectId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(${datasetAlias}.archived_at IS NULL AND ${isLiveTenantSql(Prisma.sql`${datasetAlias}.tenant_id`)}
                     AND (${datasetAlias}.project_id = ${projectId}
                          OR EXISTS (SELECT 1 FROM project_datasets pd WHERE pd.dataset_id = ${datasetAlias}.id AND pd.project_id = ${projectId})))`;
}

/** A dataset a project's queries may read. */
export interface ReadableDataset {
  dataset: Dataset;
  /** The tenant that owns the dataset (`dataset.tenantId`): its private columns are masked for any other tenant. */
  tenantId: string;
  /** Added to the project by a project-dataset approval (false: a dataset of the project's own tenant). */
  shared: boolean;
}

/**
 * The datasets the queries of project `projectId` may read, oldest first: the live datasets of
 * the project (its own tenant's) and the live datasets of other tenants added to it by an
 * approved project-dataset request whose association still stands. Names are unique among the
 * project's own datasets, not across tenants: a shared dataset may carry the name of another.
 */
export async function readableDatasets(db: Database | Transaction, projectId: string): Promise<ReadableDataset[]> {
  const datasets = await db.dataset.findMany({
    where: datasetsOfProject(projectId),
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return datasets.map((dataset) => ({ dataset, tenantId: dataset.tenantId, shared: dataset.projectId !== projectId }));
}
