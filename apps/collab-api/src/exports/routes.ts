import { pipeline } from 'node:stream/promises';
import { attachmentDisposition } from '@repo/storage';
import { EXPORT_COMPRESSIONS, EXPORT_FORMATS } from '../adapters/warehouse/query/index.js';
import type { Deps } from '../deps.js';
import { queryJobParams } from '../query-jobs/schemas.js';
import type { InternalApi, UserApi } from '../shared/api.js';
import { fileBytes, listQuery, signedLinkQuery } from '../shared/schemas.js';
import { createExportBody, downloadUrlSchema, exportParams, queryExportList, queryExportSchema } from './schemas.js';
import { createExport, downloadUrl, exportFile, getExport, listExports, openDownload } from './service.js';

/** Every content type an export's file is served with, one per format and compression. */
const EXPORT_CONTENT_TYPES = [
  ...new Set(
    EXPORT_FORMATS.flatMap((format) => EXPORT_COMPRESSIONS.map((compression) => exportFile(format, compression).contentType)),
  ),
];

/** Exports of query jobs; `links` takes the download link, whose signature is its credential, outside the authenticated API. */
export function exportRoutes(api: UserApi, links: InternalApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/query-jobs/{job_id}/exports',
    summary: "Export a DONE job's result to a file in object storage",
    description:
      "The worker writes the file; poll GET /api/v1/exports/{export_id} until DONE, then ask for its download-url. Masked columns stay null. 404: another tenant's job; 409: the job is not DONE; 410: its results expired; 403: the job read a dataset of another tenant whose owner allows no exports (its share_policy), with the reason.",
    tags: ['exports'],
    params: queryJobParams,
    body: createExportBody,
    status: 202,
    response: queryExportSchema,
    errors: [403, 404, 409, 410],
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
    description:
      "The same URL while it has more than a minute left, a new one after. 409 before the export is DONE; 410 once the job's results " +
      'expired (the file is deleted with them); 403 once an owner of a dataset the job read allows no exports (a Cloud Storage URL handed out before stays valid until it expires).',
    tags: ['exports'],
    params: exportParams,
    response: downloadUrlSchema,
    errors: [403, 404, 409, 410],
    handler: ({ params, actor }) => downloadUrl(deps, actor, params.export_id),
  });
  links.route({
    method: 'get',
    path: '/api/v1/exports/{export_id}/file',
    summary: "A DONE export's file, through its download URL",
    description:
      "The download link of local storage (Cloud Storage's links lead to the bucket instead): the url of " +
      'GET /api/v1/exports/{export_id}/download-url, whose signature is the credential (no bearer token). ' +
      "403: the signature is wrong or has expired (ask for a new URL), or an owner of a dataset the job read allows no exports; 410: the job's results expired, and the file with them.",
    tags: ['exports'],
    params: exportParams,
    query: signedLinkQuery,
    rawResponse: {
      description: 'The file, as an attachment named `query-<job id>.<extension>`',
      content: Object.fromEntries(EXPORT_CONTENT_TYPES.map((type) => [type, fileBytes])),
    },
    errors: [403, 404, 410],
    handler: async ({ params, query, res }) => {
      const file = await openDownload(deps, params.export_id, query);
      res.setHeader('Content-Type', file.contentType);
      res.setHeader('Content-Length', String(file.size));
      res.setHeader('Content-Disposition', attachmentDisposition(file.filename));
      // A client that goes away ends the read too (pipe alone would leave the file open).
      await pipeline(file.stream, res);
      return undefined;
    },
  });
}
