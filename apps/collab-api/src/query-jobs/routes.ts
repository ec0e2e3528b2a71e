import type { Deps } from '../deps.js';
import { queryParams } from '../queries/schemas.js';
import type { UserApi } from '../shared/api.js';
import { dryRunQuery } from './dry-run.js';
import {
  dryRunResponse,
  queryJobList,
  queryJobListQuery,
  queryJobParams,
  queryJobSchema,
  resultPageQuery,
  resultPageSchema,
  runQueryBody,
  runQueryResponse,
} from './schemas.js';
import { cancelQueryJob, getQueryJob, listQueryJobs, resultPage, runQuery } from './service.js';

export function queryJobRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/queries/run',
    summary: 'Run a saved query as a background job',
    description:
      "Answers at once with the job's id; poll GET /api/v1/query-jobs/{job_id}. 422: timeout_seconds is over the service's limit; 404: the " +
      "query is not the caller's tenant's (or deleted), or its project is no longer reachable; 409: query_text differs from the saved text; " +
      "429: the tenant's daily or monthly quota is used up. A job whose query would be billed more than maximum_bytes_billed fails " +
      '`bytesBilledLimitExceeded` before it runs, and is not charged. ' +
      'Failures while it runs (a table the project may not read, a file, a system catalog, anything but one SELECT, a warehouse error, ' +
      'more memory or result rows than the service allows a query: `resourcesExceeded`) end the job FAILED with error_result and ' +
      'error_details. Jobs start in round-robin order between tenants. ' +
      "The analysis rules of other tenants' tables (join-only private columns, aggregation thresholds) refuse a query that breaks them " +
      'before it runs (FAILED, accessDenied, naming the column and the rule). With `dry_run: true` the answer is 200 with what the ' +
      'query would read and cost, the tables it references and the rules it would obey; no job is made and nothing is charged (the ' +
      "quota is not checked); a query a run would refuse answers 403 (accessDenied: a rule, a table it may not read) or 400 with the job's message.",
    tags: ['query jobs'],
    body: runQueryBody,
    status: 202,
    response: runQueryResponse,
    otherResponses: { 200: { description: 'A dry run (`dry_run: true`)', schema: dryRunResponse } },
    errors: [400, 403, 404, 409, 429],
    handler: async ({ body, actor, res }) => {
      if (!body.dry_run) return runQuery(deps, actor, body);
      res.status(200).json(await dryRunQuery(deps, actor, body));
      return undefined;
    },
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
    method: 'post',
    path: '/api/v1/query-jobs/{job_id}/cancel',
    summary: 'Cancel a query job',
    description:
      'For the user who ran the job and Org admins (403 for others; 404 for a job of another tenant). A PENDING job is CANCELLED at once ' +
      'and never runs. A RUNNING one is stopped by the worker running it (DuckDB interrupts the query, BigQuery cancels its job) within ' +
      'about a second, and ends CANCELLED (poll the job); it is charged what the warehouse processed until then, as BigQuery charges a ' +
      'cancelled job (on DuckDB, which cannot tell how far it got: the bytes of every column the query reads). A query that finished ' +
      'meanwhile stays DONE. A CANCELLED job answers as it is; a DONE or FAILED one is a 409.',
    tags: ['query jobs'],
    params: queryJobParams,
    status: 202,
    response: queryJobSchema,
    errors: [403, 404, 409],
    handler: ({ params, actor }) => cancelQueryJob(deps.db, actor, params.job_id),
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
      "Columns that come from another tenant's private columns are `private` in column_privacy and null in every row. 409 before the job is DONE; " +
      '410 once its results expired (results_expire_at): they are deleted, run the query again.',
    tags: ['query jobs'],
    params: queryJobParams,
    query: resultPageQuery,
    response: resultPageSchema,
    errors: [404, 409, 410],
    handler: ({ params, query, actor }) => resultPage(deps, actor, params.job_id, query),
  });
}
