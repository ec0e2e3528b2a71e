import type { Deps } from '../deps.js';
import { queryParams } from '../queries/schemas.js';
import type { UserApi } from '../shared/api.js';
import {
  queryJobList,
  queryJobListQuery,
  queryJobParams,
  queryJobSchema,
  resultPageQuery,
  resultPageSchema,
  runQueryBody,
  runQueryResponse,
} from './schemas.js';
import { getQueryJob, listQueryJobs, resultPage, runQuery } from './service.js';

export function queryJobRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/queries/run',
    summary: 'Run a saved query as a background job',
    description:
      "Answers at once with the job's id; poll GET /api/v1/query-jobs/{job_id}. 404: the query is not the caller's tenant's (or deleted), or its " +
      "project is no longer reachable; 409: query_text differs from the saved text; 429: the tenant's daily or monthly quota is used up. " +
      'Failures while it runs (a table the project may not read, a file, a system catalog, anything but one SELECT, a warehouse error) ' +
      'end the job FAILED with error_result and error_details.',
    tags: ['query jobs'],
    body: runQueryBody,
    status: 202,
    response: runQueryResponse,
    errors: [404, 409, 429],
    handler: ({ body, actor }) => runQuery(deps, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/query-jobs',
    summary: "List the caller's tenant's query jobs, newest first",
    tags: ['query jobs'],
    query: queryJobListQuery,
    response: queryJobList,
    handler: ({ query, actor }) => listQueryJobs(deps.db, actor, {}, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/query-jobs/{job_id}',
    summary: 'Get a query job',
    tags: ['query jobs'],
    params: queryJobParams,
    response: queryJobSchema,
    errors: [404],
    handler: ({ params, actor }) => getQueryJob(deps.db, actor, params.job_id),
  });
  api.route({
    method: 'get',
    path: '/api/v1/queries/{query_id}/jobs',
    summary: 'List the jobs of a saved query, newest first',
    tags: ['query jobs'],
    params: queryParams,
    query: queryJobListQuery,
    response: queryJobList,
    errors: [404],
    handler: ({ params, query, actor }) => listQueryJobs(deps.db, actor, { queryId: params.query_id }, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/query-jobs/{job_id}/results',
    summary: "A page of a DONE job's result",
    description:
      'Read from the result the job stored when it ran; the query does not run again, and any page costs about what the first does. ' +
      "Columns that come from another tenant's private columns are `private` in column_privacy and null in every row. 409 before the job is DONE.",
    tags: ['query jobs'],
    params: queryJobParams,
    query: resultPageQuery,
    response: resultPageSchema,
    errors: [404, 409],
    handler: ({ params, query, actor }) => resultPage(deps, actor, params.job_id, query),
  });
}
