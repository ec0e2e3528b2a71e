import { NotFoundError } from '@repo/errors';
import type { ObjectStorage, OpenedObject } from '@repo/storage';
import { EVERY_INBOX, inboxFilter, type Scope } from '../api-keys/scope.js';
import type { Database } from '../database.js';
import type { Attachment, Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import { INLINE, openAttachment } from '../messages/attachments.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import { findThread } from '../threads/service.js';
import { checkDownloadToken, type DownloadLinks, servableContentType, signedDownloadUrl } from './download.js';
import type { AttachmentContentQuery, AttachmentListItem, AttachmentResponse, ListAttachmentsQuery } from './schemas.js';

export interface AttachmentDeps {
  db: Database;
  storage: ObjectStorage;
  links: DownloadLinks;
}

/**
 * Newest first. Every filter must name a record that exists within the scope (404 otherwise),
 * which keeps the list in it; together they narrow.
 */
export async function listAttachments(
  db: Database,
  scope: Scope,
  query: ListAttachmentsQuery,
): Promise<Page<AttachmentListItem>> {
  if (query.inbox_id !== undefined) await findInbox(db, scope, query.inbox_id);
  if (query.thread_id !== undefined) await findThread(db, scope, { threadId: query.thread_id });
  if (query.message_id !== undefined) await requireMessage(db, scope, query.message_id);
  const where: Prisma.AttachmentWhereInput = {
    ...(query.inbox_id !== undefined && { inboxId: query.inbox_id }),
    ...(query.thread_id !== undefined && { threadId: query.thread_id }),
    ...(query.message_id !== undefined && { messageId: query.message_id }),
  };
  const { rows, total, next } = await readPage(
    query,
    'attachments',
    NEWEST_FIRST,
    (after, take, skip) =>
      db.attachment.findMany({
        where: { AND: [where, after] },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        omit: { content: true },
        take,
        skip,
      }),
    () => db.attachment.count({ where }),
  );
  return page(rows.map(toListItem), total, next);
}

/**
 * The metadata view, with a download link that works for INBOX_DOWNLOAD_URL_TTL_SECONDS. Links to content the app
 * holds itself start with PUBLIC_BASE_URL, else with `requestBaseUrl`, the address the client used.
 */
export async function getAttachment(
  deps: AttachmentDeps,
  scope: Scope,
  attachmentId: string,
  options: { requestBaseUrl: string },
): Promise<AttachmentResponse> {
  const attachment = await findAttachment(deps.db, scope, attachmentId);
  // Inline content has no object to sign for: the app serves it.
  const presigned =
    attachment.storageKey === null
      ? undefined
      : await deps.storage.presignedDownloadUrl(attachment.storageKey, {
          expiresInSeconds: deps.links.ttlSeconds,
          filename: attachment.filename,
          contentType: servableContentType(attachment.contentType),
        });
  return {
    ...toListItem(attachment),
    disposition: attachment.disposition,
    // An attachment kept in its record is still the service's to keep: it names the service's backend.
    storage_backend: attachment.storageBackend === INLINE ? deps.storage.backend : attachment.storageBackend,
    kept_in_record: attachment.storageBackend === INLINE,
    content_hash: attachment.contentHash,
    download_url:
      presigned ?? signedDownloadUrl(attachment.id, { ...deps.links, baseUrl: deps.links.baseUrl ?? options.requestBaseUrl }),
  };
}

export interface Download {
  /** As the client asked for it: the bytes, or JSON with them base64-encoded (download.ts sends both as read). */
  format: AttachmentContentQuery['format'];
  file: Attachment;
  opened: OpenedObject;
}

/**
 * The content of an attachment, opened for streaming. Content the app serves itself (local and
 * database storage) opens only with its download link's token, whoever presents it; content in
 * Cloud Storage opens with an API key that reaches it as well (its download_url leads to the bucket).
 */
export async function openAttachmentContent(
  deps: AttachmentDeps,
  scope: Scope,
  attachmentId: string,
  query: AttachmentContentQuery,
): Promise<Download> {
  const signed = query.token !== undefined || query.expires !== undefined;
  // Before the look-up: a caller without an API key learns nothing of which ids exist.
  if (signed) checkDownloadToken(attachmentId, query, deps.links.secret);
  // A valid link is the credential for its attachment, whoever holds it.
  const attachment = await findAttachment(deps.db, signed ? EVERY_INBOX : scope, attachmentId);
  // Without a link (the API key was checked), only Cloud Storage content opens: others answer 403.
  if (!signed && attachment.storageBackend !== 'gcs') checkDownloadToken(attachmentId, query, deps.links.secret);

  return { format: query.format, file: attachment, opened: await openAttachment(deps.storage, attachment) };
}

/** The attachment, or 404; so is one of an inbox being deleted, or outside the scope. */
async function findAttachment(db: Database, scope: Scope, attachmentId: string): Promise<Attachment> {
  const attachment = isUuid(attachmentId)
    ? await db.attachment.findFirst({
        where: { id: attachmentId, message: { inbox: { deletedAt: null, ...inboxFilter(scope) } } },
      })
    : null;
  if (!attachment) throw new NotFoundError('Attachment not found', { attachment_id: attachmentId });
  return attachment;
}

async function requireMessage(db: Database, scope: Scope, messageId: string): Promise<void> {
  const found =
    isUuid(messageId) &&
    (await db.message.count({ where: { id: messageId, inbox: { deletedAt: null, ...inboxFilter(scope) } } })) > 0;
  if (!found) throw new NotFoundError('Message not found', { message_id: messageId });
}

function toListItem(attachment: Omit<Attachment, 'content'>): AttachmentListItem {
  return {
    id: attachment.id,
    message_id: attachment.messageId,
    filename: attachment.filename,
    content_type: attachment.contentType,
    size: attachment.size,
    created_at: attachment.createdAt.toISOString(),
  };
}
