import { randomUUID } from 'node:crypto';
import type { ObjectStorage } from '@repo/storage';
import { attachmentPrefix } from '../inboxes/service.js';
import type { StoredAttachment } from './records.js';

export interface AttachmentFile {
  filename: string;
  contentType: string;
  content: Buffer;
  disposition?: string;
}

/**
 * Writes attachment bytes under the inbox's prefix, so deleting the inbox removes them. Keys
 * are random, never derived from filenames. If one write fails, those already written are removed.
 */
export async function storeAttachments(
  storage: ObjectStorage,
  inboxId: string,
  files: AttachmentFile[],
): Promise<StoredAttachment[]> {
  const stored: StoredAttachment[] = [];
  try {
    for (const file of files) {
      const storageKey = `${attachmentPrefix(inboxId)}attachments/${randomUUID()}`;
      const { size, sha256 } = await storage.put(storageKey, file.content, { contentType: file.contentType });
      stored.push({
        filename: file.filename,
        contentType: file.contentType,
        size,
        disposition: file.disposition ?? 'attachment',
        storageBackend: storage.backend,
        storageKey,
        contentHash: `sha256:${sha256}`,
      });
    }
    return stored;
  } catch (error) {
    await removeStoredAttachments(storage, stored);
    throw error;
  }
}

/** Best effort: an object left behind is wasted space, never a dangling record. */
export async function removeStoredAttachments(storage: ObjectStorage, stored: StoredAttachment[]): Promise<void> {
  await Promise.allSettled(stored.map((attachment) => storage.delete(attachment.storageKey)));
}
