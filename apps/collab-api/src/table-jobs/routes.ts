import type { Api } from '@repo/http';
import { actorOf } from '../access/index.js';
import type { Deps } from '../app.js';
import type { TableJobKind } from '../generated/prisma/enums.js';
import { listQuery } from '../shared/schemas.js';
import { tableParams } from '../tables/schemas.js';
import { JOB_KINDS, jobParams, jobSchemas } from './schemas.js';
import { createJob, getJob, listJobs, listTableJobs } from './service.js';

/** The routes of one kind of table job: /import-jobs or /export-jobs, and the table's list. */
export function tableJobRoutes(api: Api, deps: Deps, kind: TableJobKind): void {
  const { path, listKey, noun } = JOB_KINDS[kind];
  const schemas = jobSchemas(JOB_KINDS[kind]);
  const tags = [`${noun}s`];
  api.route({
    method: 'post',
    path: `/api/v1/${path}`,
    summary: `Create an ${noun} for a table of the caller's tenant`,
    description: "404 when the table is not one of the caller's tenant.",
    tags,
    body: schemas.createBody,
    status: 201,
    response: schemas.job,
    errors: [404],
    handler: ({ body, res }) => createJob(deps.db, actorOf(res), kind, body),
  });
  api.route({
    method: 'get',
    path: `/api/v1/${path}`,
    summary: `List the ${noun}s of the caller's tenant, oldest first`,
    tags,
    query: listQuery,
    response: schemas.list,
    handler: async ({ query, res }) => ({ [listKey]: await listJobs(deps.db, actorOf(res), kind, query) }),
  });
  api.route({
    method: 'get',
    path: `/api/v1/${path}/{job_id}`,
    summary: `Get an ${noun}`,
    tags,
    params: jobParams,
    response: schemas.job,
    errors: [404],
    handler: ({ params, res }) => getJob(deps.db, actorOf(res), kind, params.job_id),
  });
  api.route({
    method: 'get',
    path: `/api/v1/tables/{table_id}/${path}`,
    summary: `List the ${noun}s of a table, oldest first`,
    tags,
    params: tableParams,
    query: listQuery,
    response: schemas.list,
    errors: [404],
    handler: async ({ params, query, res }) => ({
      [listKey]: await listTableJobs(deps.db, actorOf(res), kind, params.table_id, query),
    }),
  });
}
