import { pipeline } from 'node:stream/promises';
import type { Router } from 'express';
import { parseInput } from '@repo/errors';
import { attachmentDisposition } from '@repo/storage';
import type { Deps } from '../deps.js';
import { queryJobParams } from '../query-jobs/schemas.js';
import type { UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import {
  createExportBody,
  downloadLinkQuery,
  downloadUrlSchema,
  exportParams,
  queryExportList,
  queryExportSchema,
} from './schemas.js';
import { createExport, downloadUrl, getExport, listExports, openDownload } from './service.js';

/** Exports of query jobs; `router` takes the download link, whose signature is its credential, outside the authenticated API. */
export function exportRoutes(api: UserApi, router: Router, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/query-jobs/{job_id}/exports',
    summary: "Export a DONE job's result to a file in object storage",
    description:
      "The worker writes the file; poll GET /api/v1/exports/{export_id} until DONE, then ask for its download-url. Masked columns stay null. 404: another tenant's job; 409: the job is not DONE.",
    tags: ['exports'],
    params: queryJobParams,
    body: createExportBody,
    status: 202,
    response: queryExportSchema,
    errors: [404, 409],
    handler: ({ params, body, actor }) => createExport(deps, actor, params.job_id, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/query-jobs/{job_id}/exports',
    summary: 'List the exports of a query job, oldest first',
    tags: ['exports'],
    params: queryJobParams,
    query: listQuery,
    response: queryExportList,
    errors: [404],
    handler: ({ params, query, actor }) => listExports(deps.db, actor, params.job_id, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/exports/{export_id}',
    summary: 'Get an export',
    tags: ['exports'],
    params: exportParams,
    response: queryExportSchema,
    errors: [404],
    handler: ({ params, actor }) => getExport(deps.db, actor, params.export_id),
  });
  api.route({
    method: 'get',
    path: '/api/v1/exports/{export_id}/download-url',
    summary: "A signed URL that downloads a DONE export's file",
    description: 'The same URL while it has more than a minute left, a new one after. 409 before the export is DONE.',
    tags: ['exports'],
    params: exportParams,
    response: downloadUrlSchema,
    errors: [404, 409],
    handler: ({ params, actor }) => downloadUrl(deps, actor, params.export_id),
  });
  // The download link of local storage (Cloud Storage's links lead to the bucket instead).
  router.get('/api/v1/exports/:export_id/file', async (req, res) => {
    const { export_id: exportId } = parseInput(exportParams, 'path', req.params);
    const link = parseInput(downloadLinkQuery, 'query', req.query);
    const file = await openDownload(deps, exportId, link);
    res.setHeader('Content-Type', file.contentType);
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Disposition', attachmentDisposition(file.filename));
    // A client that goes away ends the read too (pipe alone would leave the file open).
    await pipeline(file.stream, res);
  });
}
