import type { Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { createQueryBody, queryList, queryListQuery, queryParams, querySchema, updateQueryBody } from './schemas.js';
import { archiveQuery, createQuery, getQuery, listQueries, updateQuery } from './service.js';

export function queryRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/queries',
    summary: 'Save a query in a project the caller’s tenant owns or was invited to',
    description: '404 when the project is not reachable. The text is checked when it runs, not here.',
    tags: ['queries'],
    body: createQueryBody,
    status: 201,
    response: querySchema,
    errors: [404],
    handler: ({ body, actor }) => createQuery(deps.db, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/queries',
    summary: "List the caller's tenant's saved queries, oldest first",
    tags: ['queries'],
    query: queryListQuery,
    response: queryList,
    handler: ({ query, actor }) => listQueries(deps.db, actor, { projectId: query.project_id }, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/queries/{query_id}',
    summary: 'Get a saved query',
    tags: ['queries'],
    params: queryParams,
    response: querySchema,
    errors: [404],
    handler: ({ params, actor }) => getQuery(deps.db, actor, params.query_id),
  });
  api.route({
    method: 'patch',
    path: '/api/v1/queries/{query_id}',
    summary: 'Change a saved query’s text or project',
    tags: ['queries'],
    params: queryParams,
    body: updateQueryBody,
    response: querySchema,
    errors: [404],
    handler: ({ params, body, actor }) => updateQuery(deps.db, actor, params.query_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/queries/{query_id}',
    summary: 'Delete a saved query (soft); its jobs stay',
    tags: ['queries'],
    params: queryParams,
    status: 204,
    errors: [404],
    handler: ({ params, actor }) => archiveQuery(deps.db, actor, params.query_id),
  });
}
