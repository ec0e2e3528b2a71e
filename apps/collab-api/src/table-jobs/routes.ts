import type { Deps } from '../deps.js';
import type { TableJobKind } from '../generated/prisma/enums.js';
import type { UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import { tableParams } from '../tables/schemas.js';
import { JOB_KINDS, jobParams, jobSchemas } from './schemas.js';
import { createJob, getJob, listJobs, listTableJobs } from './service.js';

/** Import jobs and export jobs: the same routes, each under its own paths. */
export function tableJobRoutes(api: UserApi, deps: Deps): void {
  jobRoutes(api, deps, {
    kind: 'import',
    collection: '/api/v1/import-jobs',
    item: '/api/v1/import-jobs/{job_id}',
    ofTable: '/api/v1/tables/{table_id}/import-jobs',
  });
  jobRoutes(api, deps, {
    kind: 'export',
    collection: '/api/v1/export-jobs',
    item: '/api/v1/export-jobs/{job_id}',
    ofTable: '/api/v1/tables/{table_id}/export-jobs',
  });
}

function jobRoutes(
  api: UserApi,
  deps: Deps,
  { kind, collection, item, ofTable }: { kind: TableJobKind; collection: string; item: string; ofTable: string },
): void {
  const { listKey, noun } = JOB_KINDS[kind];
  const schemas = jobSchemas(JOB_KINDS[kind]);
  const tags = [`${noun}s`];
  api.route({
    method: 'post',
    path: collection,
    summary: `Create an ${noun} for a table of the caller's tenant`,
    description:
      "404 when the table is not one of the caller's tenant. Waits for a warehouse change of the table under way (409 when it takes too long).",
    tags,
    body: schemas.createBody,
    status: 201,
    response: schemas.job,
    errors: [404, 409],
    handler: ({ body, actor }) => createJob(deps.db, actor, kind, body),
  });
  api.route({
    method: 'get',
    path: collection,
    summary: `List the ${noun}s of the caller's tenant, oldest first`,
    tags,
    query: listQuery,
    response: schemas.list,
    handler: async ({ query, actor }) => ({ [listKey]: await listJobs(deps.db, actor, kind, query) }),
  });
  api.route({
    method: 'get',
    path: item,
    summary: `Get an ${noun}`,
    tags,
    params: jobParams,
    response: schemas.job,
    errors: [404],
    handler: ({ params, actor }) => getJob(deps.db, actor, kind, params.job_id),
  });
  api.route({
    method: 'get',
    path: ofTable,
    summary: `List the ${noun}s of a table, oldest first`,
    tags,
    params: tableParams,
    query: listQuery,
    response: schemas.list,
    errors: [404],
    handler: async ({ params, query, actor }) => ({
      [listKey]: await listTableJobs(deps.db, actor, kind, params.table_id, query),
    }),
  });
}
