import { NotFoundError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import { findReachableProject } from '../associations/access.js';
import type { Database, Transaction } from '../database.js';
import type { Query } from '../generated/prisma/client.js';
import { iso, oldestFirst, type ListOptions } from '../shared/schemas.js';
import type { CreateQueryInput, QueryResponse, UpdateQueryInput } from './schemas.js';

export function toQueryResponse(query: Query): QueryResponse {
  return {
    id: query.id,
    tenant_id: query.tenantId,
    project_id: query.projectId,
    query_text: query.queryText,
    name: query.name,
    description: query.description,
    created_at: iso(query.createdAt),
    archived_at: null,
  };
}

/** A live query of the actor's tenant; 404 otherwise (another tenant's, archived, or none). */
export async function findQuery(db: Database | Transaction, actor: Actor, queryId: string): Promise<Query> {
  const query = await db.query.findFirst({ where: { id: queryId, ...liveIn(actor) } });
  if (!query) throw new NotFoundError('Query not found');
  return query;
}

/** In a project the actor's tenant owns or was invited to; the query is the actor's tenant's either way. */
export async function createQuery(db: Database, actor: Actor, input: CreateQueryInput): Promise<QueryResponse> {
  const { project } = await findReachableProject(db, actor, input.project_id);
  const query = await db.query.create({
    data: {
      tenantId: actor.tenantId,
      projectId: project.id,
      queryText: input.query_text,
      name: input.name ?? null,
      description: input.description ?? null,
    },
  });
  return toQueryResponse(query);
}

export async function listQueries(
  db: Database,
  actor: Actor,
  filter: { projectId?: string },
  page: ListOptions,
): Promise<{ queries: QueryResponse[] }> {
  const queries = await db.query.findMany({
    where: { ...liveIn(actor), ...(filter.projectId ? { projectId: filter.projectId } : {}) },
    ...oldestFirst(page),
  });
  return { queries: queries.map(toQueryResponse) };
}

export async function getQuery(db: Database, actor: Actor, queryId: string): Promise<QueryResponse> {
  return toQueryResponse(await findQuery(db, actor, queryId));
}

export async function updateQuery(db: Database, actor: Actor, queryId: string, input: UpdateQueryInput): Promise<QueryResponse> {
  const query = await findQuery(db, actor, queryId);
  const projectId = input.project_id ? (await findReachableProject(db, actor, input.project_id)).project.id : undefined;
  const { count } = await db.query.updateMany({
    where: { id: query.id, ...liveIn(actor) },
    // Absent (undefined) keeps a field; null keeps the text and project, and removes a name or description.
    data: { queryText: input.query_text ?? undefined, projectId, name: input.name, description: input.description },
  });
  if (count === 0) throw new NotFoundError('Query not found');
  return toQueryResponse(await findQuery(db, actor, queryId));
}

/** Soft delete: the query's jobs stay readable. */
export async function archiveQuery(db: Database, actor: Actor, queryId: string): Promise<void> {
  const { count } = await db.query.updateMany({ where: { id: queryId, ...liveIn(actor) }, data: { archivedAt: new Date() } });
  if (count === 0) throw new NotFoundError('Query not found');
}
