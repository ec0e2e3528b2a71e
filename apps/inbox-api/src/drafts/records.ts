import { isUniqueViolation } from '@repo/db';
import type { Actor } from '../api-keys/scope.js';
import { type Database, prismaStatements } from '../database.js';
import { appendEvents, type EventType, type NewEvent } from '../events/log.js';
import type { Draft, Prisma } from '../generated/prisma/client.js';
import { base64ByteLength } from '../messages/base64.js';
import { type IdempotentRequest, requireSameRequest } from '../messages/idempotency.js';
import type { SendMessageInput } from '../messages/schemas.js';
import type { DraftResponse } from './schemas.js';

/** What a draft stores of its send: POST /v1/messages' body. */
export type DraftInput = SendMessageInput;

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** The files a held forward carries along (its origin): sent first, before the draft's own. */
type ForwardedAttachments = { forwarded_attachments?: DraftResponse['attachments'] } | null;

export function toDraftResponse(draft: Draft): DraftResponse {
  const input = draft.input as unknown as DraftInput & { cc?: string[]; bcc?: string[] };
  const forwarded = (draft.origin as ForwardedAttachments)?.forwarded_attachments ?? [];
  return {
    id: draft.id,
    inbox_id: draft.inboxId,
    status: draft.status,
    to: input.to,
    cc: input.cc ?? [],
    bcc: input.bcc ?? [],
    subject: input.subject,
    body: input.body,
    attachments: [
      ...forwarded,
      ...(input.attachments ?? []).map((attachment) => ({
        filename: attachment.filename,
        content_type: attachment.content_type,
        size: base64ByteLength(attachment.content) ?? 0,
      })),
    ],
    reply_to_thread_id: input.reply_to_thread_id ?? null,
    send_at: iso(draft.sendAt),
    created_by: draft.createdBy,
    approved_at: iso(draft.approvedAt),
    approved_by: draft.approvedBy,
    rejected_at: iso(draft.rejectedAt),
    rejection_reason: draft.rejectionReason,
    message_id: draft.messageId,
    sent_at: iso(draft.sentAt),
    last_error: draft.lastError,
    created_at: draft.createdAt.toISOString(),
    updated_at: draft.updatedAt.toISOString(),
  };
}

/** The event of a draft's change, carrying the draft as GET /v1/drafts/{id} shows it. */
export function draftEvent(type: EventType, organizationId: string, draft: Draft): NewEvent {
  return {
    type,
    organizationId,
    inboxId: draft.inboxId,
    threadId: null,
    messageId: draft.messageId,
    data: toDraftResponse(draft),
  };
}

/** Who acted, as a draft records it: the API key's id, or `operator`. */
export function actorName(actor: Actor): string {
  return actor.kind === 'key' ? actor.keyId : 'operator';
}

/**
 * The draft a send held for approval made with this Idempotency-Key, whatever became of it since
 * (approved, sent, rejected): what a retry of that send is answered, even once the inbox no longer
 * holds sends. 409 when the key went with another request.
 */
export async function heldSendOf(db: Database, request: IdempotentRequest): Promise<Draft | null> {
  const draft = await db.draft.findUnique({
    where: { inboxId_idempotencyKey: { inboxId: request.inboxId, idempotencyKey: request.key } },
  });
  if (draft) requireSameRequest(draft.idempotencyRequestHash, request);
  return draft;
}

/**
 * A send from an inbox under the `approval` policy, kept as a draft pending approval (with the
 * events draft.created and draft.pending_approval). With an Idempotency-Key, a retry of the same
 * send finds the draft the first one made.
 */
export async function holdForApproval(
  db: Database,
  request: {
    actor: Actor;
    inbox: { id: string; organizationId: string };
    input: DraftInput;
    origin?: Prisma.InputJsonObject;
    idempotency?: IdempotentRequest;
  },
): Promise<Draft> {
  const { inbox, idempotency } = request;
  const earlier = () => (idempotency === undefined ? null : heldSendOf(db, idempotency));
  const found = await earlier();
  if (found) return found;
  try {
    return await db.$transaction(async (tx) => {
      const draft = await tx.draft.create({
        data: {
          inboxId: inbox.id,
          status: 'pending_approval',
          input: request.input,
          ...(request.origin && { origin: request.origin }),
          createdBy: request.actor.kind === 'key' ? request.actor.keyId : null,
          idempotencyKey: idempotency?.key ?? null,
          idempotencyRequestHash: idempotency?.requestHash ?? null,
        },
      });
      await appendEvents(prismaStatements(tx), [
        draftEvent('draft.created', inbox.organizationId, draft),
        draftEvent('draft.pending_approval', inbox.organizationId, draft),
      ]);
      return draft;
    });
  } catch (error) {
    const raced = isUniqueViolation(error, ['inbox_id', 'idempotency_key']) ? await earlier() : null;
    if (raced) return raced;
    throw error;
  }
}
