import { parseInput } from '@repo/errors';
import type { Deps } from '../deps.js';
import type { InternalApi, UserApi } from '../shared/api.js';
import { fileBytes, signedLinkQuery } from '../shared/schemas.js';
import {
  createLoadJobForm,
  createLoadJobInput,
  linkUploadSchema,
  loadJobList,
  loadJobListQuery,
  loadJobParams,
  loadJobSchema,
  createdLoadJobSchema,
} from './schemas.js';
import {
  cancelLoadJob,
  createLoadJob,
  getLoadJob,
  listLoadJobs,
  receiveLinkUpload,
  startLoadJob,
  storeUpload,
  UPLOAD_LINK_MAX_BYTES,
} from './service.js';
import { receiveMultipart, type StoredUpload, UPLOAD_CONTENT_TYPE } from './upload.js';

/**
 * `/load_job/...` (no `/api/v1` prefix, as the spec writes them). `links` takes the upload link,
 * whose signature is its credential, outside the authenticated API.
 */
export function loadJobRoutes(api: UserApi, links: InternalApi, deps: Deps): void {
  const maxBytes = deps.config.COLLAB_LOAD_MAX_UPLOAD_BYTES;
  api.route({
    method: 'post',
    path: '/load_job/',
    summary: 'Create a load job: with a file, it starts at once; without one, it waits for the file at its upload_url',
    description:
      `A multipart/form-data body with the file in the field \`file\` (at most ${maxBytes} bytes; 413 above) and the fields ` +
      '`table_id`, `write_disposition`, `autodetect`, `source_format`; the file is streamed into object storage and the job ' +
      'starts (201, Running). Without a file (multipart or JSON fields alone, `source_format` required), the job is created ' +
      `Pending with an \`upload_url\`: PUT the file there (Content-Type: ${UPLOAD_CONTENT_TYPE}), then ` +
      'POST /load_job/{job_id}/upload. 404: the table is not one of the caller’s tenant; 409: a job of the table is running.',
    tags: ['load jobs'],
    // Read here, by receiveMultipart (the file streamed as it arrives) or as JSON, then validated: 422.
    rawBody: {
      description: 'The form with the file, or the fields alone (multipart or JSON) to upload the file later',
      content: { 'multipart/form-data': createLoadJobForm, 'application/json': createLoadJobInput },
    },
    status: 201,
    response: createdLoadJobSchema,
    errors: [404, 409, 413],
    handler: async ({ req, res, actor }) => {
      const remove = (file: StoredUpload) => deps.storage.delete(file.key);
      const upload = await receiveMultipart(req, res, {
        maxBytes,
        store: (name, body) => storeUpload(deps, actor, name, body),
        remove,
      });
      try {
        const input = parseInput(createLoadJobInput, 'body', upload?.fields ?? req.body ?? {});
        return await createLoadJob(deps, actor, input, upload?.file);
      } catch (error) {
        // Refused (bad fields, another tenant's table, a job running): the file goes.
        if (upload?.file) await remove(upload.file);
        throw error;
      }
    },
  });
  api.route({
    method: 'post',
    path: '/load_job/{job_id}/upload',
    summary: 'Start a Pending load job once its file is at its upload_url',
    description: '409 while the file has not been uploaded, when the job is not Pending, or when a job of the table is running.',
    tags: ['load jobs'],
    params: loadJobParams,
    response: loadJobSchema,
    errors: [404, 409],
    handler: ({ params, actor }) => startLoadJob(deps, actor, params.job_id),
  });
  api.route({
    method: 'get',
    path: '/load_job/{job_id}',
    summary: 'Get a load job',
    tags: ['load jobs'],
    params: loadJobParams,
    response: loadJobSchema,
    errors: [404],
    handler: ({ params, actor }) => getLoadJob(deps.db, actor, params.job_id),
  });
  api.route({
    method: 'get',
    path: '/load_job/',
    summary: 'List the load jobs of a table, newest first',
    tags: ['load jobs'],
    query: loadJobListQuery,
    response: loadJobList,
    errors: [404],
    handler: ({ query, actor }) => listLoadJobs(deps.db, actor, query.table_id, query),
  });
  api.route({
    method: 'post',
    path: '/load_job/{job_id}/cancel',
    summary: 'Cancel a load job',
    description:
      'A Pending job is Cancelled at once. A Running one is stopped before it commits if it still can be (it then ends ' +
      'Cancelled, the table unchanged; poll the job). 409 for a job that has ended.',
    tags: ['load jobs'],
    params: loadJobParams,
    status: 202,
    response: loadJobSchema,
    errors: [404, 409],
    handler: ({ params, actor }) => cancelLoadJob(deps.db, actor, params.job_id),
  });
  links.route({
    method: 'put',
    path: '/load_job/{job_id}/file',
    summary: "A Pending job's file, sent to its upload_url",
    description:
      `The upload link of local storage (Cloud Storage's links lead to the bucket instead): the upload_url of a job created ` +
      `without a file, whose signature is the credential (no bearer token). The body is the file's bytes, with ` +
      `Content-Type: ${UPLOAD_CONTENT_TYPE}; then POST /load_job/{job_id}/upload. 403: the signature is wrong or has ` +
      `expired; 409: the job is no longer Pending; 413: over ${UPLOAD_LINK_MAX_BYTES} bytes; 415: a JSON body.`,
    tags: ['load jobs'],
    params: loadJobParams,
    query: signedLinkQuery,
    rawBody: { content: { [UPLOAD_CONTENT_TYPE]: fileBytes } },
    response: linkUploadSchema,
    errors: [403, 404, 409, 413, 415],
    handler: ({ params, query, req }) => receiveLinkUpload(deps, params.job_id, query, req),
  });
}
