import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * What a `wait_for_reply` task is: everything needed to answer for it, carried by the client in
 * the task id, so that no replica of inbox-mcp keeps any state and any of them (or a restarted
 * one) can answer `tasks/get`. Field names are short: the id travels in every poll.
 */
export const waitTaskSchema = z.object({
  /** The thread waited on. */
  thread: z.string(),
  /** The event log's cursor when the task started: only a `message.received` after it counts. */
  after: z.number().int().min(0),
  /** When the task was created and when it gives up waiting, in ms since the epoch. */
  created: z.number().int(),
  deadline: z.number().int(),
  /** keyDigest of the bearer key that created it: another key cannot read the task. */
  caller: z.string(),
});
export type WaitTask = z.output<typeof waitTaskSchema>;

// Bumped if the sealed layout or the payload changes, so an old id is refused as unknown, not misread.
const VERSION = 'w1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The AES-256 key behind task ids: SHA-256 of the INBOX_MCP_TASK_KEY secret, whatever its encoding. */
export function taskKeyFrom(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/**
 * A task as an opaque id: AES-256-GCM over its JSON, with a random IV, the version prefix bound
 * as associated data. Nobody without the key can read it (the thread, the caller's key digest) or
 * make one that opens.
 */
export function sealTaskId(key: Buffer, task: WaitTask): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(VERSION));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(task), 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url')}`;
}

/** The task an id stands for; undefined for anything not sealed by this key (forged, altered, truncated, of another version). */
export function openTaskId(key: Buffer, id: string): WaitTask | undefined {
  const [version, body, ...rest] = id.split('.');
  if (version !== VERSION || body === undefined || rest.length > 0 || !/^[\w-]+$/.test(body)) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES + 1) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(VERSION));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  let json: string;
  try {
    json = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    // The authentication tag does not match: not sealed with this key, or altered.
    return undefined;
  }
  const parsed = waitTaskSchema.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : undefined;
}
