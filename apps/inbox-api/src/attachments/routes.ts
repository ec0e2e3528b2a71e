import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { sendDownload } from './download.js';
import {
  attachmentContentQuery,
  attachmentContentSchema,
  attachmentPage,
  attachmentParams,
  attachmentSchema,
  listAttachmentsQuery,
} from './schemas.js';
import { type AttachmentDeps, getAttachment, listAttachments, openAttachmentContent } from './service.js';

export function attachmentRoutes(api: InboxApi, deps: Deps): void {
  const attachmentDeps: AttachmentDeps = {
    db: deps.db,
    storage: deps.storage,
    links: {
      baseUrl: deps.config.PUBLIC_BASE_URL,
      secret: deps.downloadSecret,
      ttlSeconds: deps.config.INBOX_DOWNLOAD_URL_TTL_SECONDS,
    },
  };
  api.route({
    method: 'get',
    path: '/v1/attachments',
    tags: ['attachments'],
    summary: 'List attachments, newest first',
    description:
      'Needs `message_id`, `thread_id` or `inbox_id`; given together, an attachment must match all of them. ' +
      'Each must name an existing record (404 otherwise). `limit` is 100 by default, at most 200.',
    query: listAttachmentsQuery,
    response: attachmentPage,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, query }) => listAttachments(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'get',
    path: '/v1/attachments/{attachment_id}',
    tags: ['attachments'],
    summary: 'Get an attachment’s metadata and download link',
    params: attachmentParams,
    response: attachmentSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    // Without PUBLIC_BASE_URL, links lead where this request was sent (PORT may be 0: any free one).
    handler: ({ actor, params, req }) =>
      getAttachment(attachmentDeps, scopeOf(actor), params.attachment_id, {
        requestBaseUrl: `${req.protocol}://${req.get('host')}`,
      }),
  });
  api.route({
    method: 'get',
    path: '/v1/attachments/{attachment_id}/content',
    tags: ['attachments'],
    summary: 'Download an attachment',
    description:
      '`format=binary` (default) answers the bytes with their Content-Type, Content-Length, an ETag and ' +
      '`Content-Disposition: attachment`; `format=base64` answers the JSON below, of any size, streamed with its Content-Length. ' +
      'A response that ends short of its Content-Length failed (storage could not be read) and is not the content. ' +
      'With the `token` and `expires` of a `download_url` no API key is needed; a missing, wrong or expired link is 403. ' +
      'Content in local or database storage needs the link; content in Cloud Storage opens with the API key alone too.',
    params: attachmentParams,
    query: attachmentContentQuery,
    response: attachmentContentSchema,
    errors: [403, 404],
    // The link (token and expires) is checked by the handler: it needs no permission of a key.
    authorize: ({ actor }) => {
      if (actor.kind !== 'link') requirePermission(actor, 'read');
    },
    handler: async ({ actor, params, query, req, res }) => {
      const download = await openAttachmentContent(attachmentDeps, scopeOf(actor), params.attachment_id, query);
      await sendDownload(req, res, download, deps.logger);
      return undefined;
    },
  });
}
