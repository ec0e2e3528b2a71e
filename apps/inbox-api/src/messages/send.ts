import type { CrashPoint } from '@repo/config';
import { AppError, BadRequestError, PayloadTooLargeError } from '@repo/errors';
import type { Logger } from '@repo/http';
import type { ObjectStorage } from '@repo/storage';
import type { MailTransport, OutboundMail, SentMail } from '../adapters/mail/index.js';
import { holdLiveKey } from '../api-keys/service.js';
import { type Actor, scopeOf } from '../api-keys/scope.js';
import { type Database, prismaStatements } from '../database.js';
import type { Attachment, Message, Prisma } from '../generated/prisma/client.js';
import { findInbox, holdLiveInbox } from '../inboxes/service.js';
import type { SummaryRequests } from '../summaries/service.js';
import { findThread, latestMessage } from '../threads/service.js';
import { newMessageId, replyHeaders, subjectKey } from '../threads/threading.js';
import { type AttachmentFile, discardStoredObjects, objectKeys, settlePendingObjects, storeAttachments } from './attachments.js';
import { base64ByteLength } from './base64.js';
import type { ContentPool } from './content/index.js';
import { claimIdempotencyKey, idempotentRequest, keyForMessage, previousAnswer } from './idempotency.js';
import { deliveryMetadata, leaseEnd, markFailed, markSent } from './outbox.js';
import { fixedLabelsTouched } from './labels.js';
import { checkOutbound, giveBackSend, type PolicyDeps } from './policy.js';
import { heldSendOf, holdForApproval, toDraftResponse } from '../drafts/records.js';
import { type DraftResponse, heldSendSchema } from '../drafts/schemas.js';
import type { Deps } from '../deps.js';
import type { Response } from 'express';
import { outboundSize, recordMessage, toSendResult } from './records.js';
import type { SendMessageInput, SendResult } from './schemas.js';

export interface SendDeps extends PolicyDeps {
  db: Database;
  storage: ObjectStorage;
  mailer: MailTransport;
  content: ContentPool;
  logger: Logger;
  crashPoint: CrashPoint;
  emailDomain: string;
  maxAttachmentBytes: number;
  leaseSeconds: number;
  inlineMaxBytes: number;
  summaries: SummaryRequests;
}

export interface SendOptions {
  actor: Actor;
  input: SendMessageInput;
  idempotencyKey?: string;
  /**
   * A reply (messages/conversations.ts): the message answered, which In-Reply-To and References
   * name (rather than the thread's newest message).
   */
  answering?: { id: string; providerMessageId: string; references: string | null; inReplyTo?: string | null };
  /** A forward: the forwarded message's id, and its attachments, carried along. */
  forwarding?: { id: string; files: AttachmentFile[] };
  /** An approved draft's send (drafts/service.ts): not held for approval again. */
  approved?: boolean;
  /**
   * Runs in the transaction that records the message, before anything is sent: a draft claims the
   * message there (drafts/service.ts), and when it throws nothing is recorded or sent.
   */
  onRecorded?: (tx: Prisma.TransactionClient, messageId: string) => Promise<void>;
}

/**
 * Sends a message through the outbox (see outbox.ts), in four steps:
 * 1. everything that can refuse the request, before anything is written or sent: the inbox and
 *    thread exist within the caller's scope, the attachments fit, the Idempotency-Key is free or
 *    answers a replay, the safety gate lets it through (policy.ts: kill switches, send lists, the
 *    inbox's, the API key's and the new-recipient caps), the content renders;
 * 2. the attachments' bytes, journaled until their record commits;
 * 3. the records (message `sending`, thread, search row, attachments, key) in one transaction
 *    that holds the inbox, so that a delete under way answers 404 and nothing is sent, and the
 *    caller's API key, so that a revocation under way answers 401 and nothing is sent (a
 *    revocation waits for the sends recorded before it, as an inbox's delete does);
 * 4. the transport, then `sent` (or `failed` with the provider's reason, which frees the key).
 * Under the inbox's `approval` policy, step 1 ends with the send kept as a draft pending approval
 * (HeldSend), unless it is an approved draft's.
 * Once the provider has the message, nothing answers 5xx: what could not be recorded after it
 * is logged and resolved by the reconciler.
 */
/** A send from an inbox under the `approval` policy: kept as a draft pending approval (202). */
export interface HeldSend {
  draft: DraftResponse;
}

export async function sendMessage(deps: SendDeps, options: SendOptions): Promise<SendResult | HeldSend> {
  const { actor, input, idempotencyKey, answering, forwarding, approved, onRecorded } = options;
  const scope = scopeOf(actor);
  const apiKeyId = actor.kind === 'key' ? actor.keyId : undefined;
  const fixed = fixedLabelsTouched({ add: input.labels });
  if (fixed.length > 0) {
    throw new BadRequestError(`Labels ${fixed.join(', ')} are set by the service`, { labels: fixed });
  }
  const inbox = await findInbox(deps.db, scope, input.inbox_id);
  const thread = input.reply_to_thread_id
    ? await findThread(deps.db, scope, { threadId: input.reply_to_thread_id, inboxId: inbox.id })
    : undefined;
  const files = decodeAttachments(input.attachments ?? [], deps.maxAttachmentBytes, forwarding?.files ?? []);
  const keyed =
    idempotencyKey === undefined
      ? undefined
      : idempotentRequest(inbox.id, idempotencyKey, input, { answering: answering?.id, forwarding: forwarding?.id });
  const replay = keyed && (await previousAnswer(deps.db, keyed));
  if (replay) return replay;
  // A retry of a send that was held: its draft, as it is now (sent once approved), whatever the policy is now.
  // (Not for a draft's own send, whose key names no held send.)
  const held = !approved && keyed && (await heldSendOf(deps.db, keyed));
  if (held) return { draft: toDraftResponse(held) };
  const gate = await checkOutbound(deps, {
    actor,
    inbox,
    recipients: [...input.to, ...(input.cc ?? []), ...(input.bcc ?? [])],
    stage: approved ? 'approved' : 'send',
  });
  if (gate === 'hold') {
    const origin = {
      ...(answering && { answering }),
      ...(forwarding && {
        forwarding_message_id: forwarding.id,
        // What approving it sends besides its own attachments: the reviewer sees them on the draft.
        forwarded_attachments: forwarding.files.map((file) => ({
          filename: file.filename,
          content_type: file.contentType,
          size: file.content.length,
        })),
      }),
    };
    return { draft: toDraftResponse(await holdForApproval(deps.db, { actor, inbox, input, origin, idempotency: keyed })) };
  }
  // Until it is recorded, a send that does not go after all gives back what the caps counted.
  const notMade = async (error: unknown): Promise<never> => {
    await giveBackSend(deps, { actor, inbox });
    throw error;
  };
  const content = await deps.content.renderMessage(input.body).catch(notMade);
  const latest = answering ?? (thread ? await latestMessage(deps.db, thread.id) : null);
  const reply = latest ? replyHeaders(latest) : undefined;
  const mail: OutboundMail = {
    from: inbox.emailAddress,
    to: input.to,
    cc: input.cc ?? [],
    bcc: input.bcc ?? [],
    replyTo: input.reply_to ?? [],
    subject: input.subject,
    text: content.text,
    html: content.html,
    messageId: newMessageId(deps.emailDomain),
    inReplyTo: reply?.inReplyTo,
    references: reply?.references,
    attachments: files,
  };

  const stored = await storeAttachments(deps, inbox.id, files).catch(notMade);
  deps.crashPoint('send:attachments-stored');
  let recorded: { message: Message; attachments: Attachment[] } | { replay: SendResult };
  try {
    recorded = await deps.db.$transaction(async (tx) => {
      await holdLiveInbox(tx, inbox.id);
      if (apiKeyId) await holdLiveKey(tx, apiKeyId);
      const earlier = keyed && (await claimIdempotencyKey(tx, keyed));
      if (earlier) return { replay: earlier };
      const record = await recordMessage(prismaStatements(tx), {
        inboxId: inbox.id,
        threadId: thread?.id,
        apiKeyId,
        direction: 'outbound',
        status: 'sending',
        leaseUntil: await leaseEnd(tx, deps.leaseSeconds),
        metadata: deliveryMetadata('sending', { provider: deps.mailer.name, at: new Date() }),
        providerMessageId: mail.messageId,
        subject: mail.subject,
        subjectKey: subjectKey(mail.subject),
        from: mail.from,
        to: mail.to,
        cc: mail.cc ?? [],
        bcc: mail.bcc ?? [],
        replyTo: mail.replyTo ?? [],
        labels: input.labels,
        text: mail.text,
        html: mail.html,
        contentClean: content.contentClean,
        preview: content.preview,
        size: outboundSize(mail),
        inReplyTo: mail.inReplyTo ?? null,
        references: mail.references?.join(' ') ?? null,
        timestamp: new Date(),
        attachments: stored,
      });
      if (keyed) await keyForMessage(tx, keyed, record.message.id);
      await settlePendingObjects(prismaStatements(tx), stored);
      await deps.summaries.request(tx, record.message.threadId);
      await onRecorded?.(tx, record.message.id);
      return record;
    });
  } catch (error) {
    await discardStoredObjects(deps, objectKeys(stored));
    return notMade(error);
  }
  if ('replay' in recorded) {
    // Another request with this Idempotency-Key made the send: this one is its answer, not a send.
    await discardStoredObjects(deps, objectKeys(stored));
    await giveBackSend(deps, { actor, inbox });
    return recorded.replay;
  }
  deps.crashPoint('send:recorded');

  const { message, attachments } = recorded;
  const result = toSendResult(message, attachments);
  let sent: SentMail;
  try {
    sent = await deps.mailer.send(mail);
  } catch (error) {
    await markFailed(deps.db, {
      messageId: message.id,
      provider: deps.mailer.name,
      reason: failureReason(error),
      notSent: true,
    }).catch((markError: unknown) =>
      deps.logger.error({ err: markError, messageId: message.id }, 'could not mark a send failed'),
    );
    // The failed message stays on record, visible as such: tell the client which it is.
    if (error instanceof AppError) Object.assign(error.details, { message_id: message.id });
    throw error;
  }
  deps.crashPoint('send:transport-done');
  try {
    await markSent(deps.db, {
      messageId: message.id,
      provider: deps.mailer.name,
      providerMessageId: sent.messageId,
      transportMessageId: sent.transportMessageId,
      result,
    });
  } catch (error) {
    // The mail has left: the answer is the record as it stands; the reconciler settles it.
    deps.logger.error({ err: error, messageId: message.id }, 'message was sent but could not be marked sent');
  }
  return result;
}

/** What sends need of the app's Deps. */
export function sendDepsOf(deps: Deps): SendDeps {
  return {
    ...deps,
    sendLimit: deps.limits.sends,
    sendsPerHour: deps.config.INBOX_SEND_LIMIT_PER_HOUR,
    sendsPerDay: deps.config.INBOX_SEND_LIMIT_PER_DAY,
    keySendLimit: deps.limits.keySends,
    keySendsPerHour: deps.config.INBOX_SEND_LIMIT_PER_HOUR,
    newRecipientsPerDay: deps.config.INBOX_NEW_RECIPIENT_LIMIT_PER_DAY,
    emailDomain: deps.config.INBOX_EMAIL_DOMAIN,
    maxAttachmentBytes: deps.config.INBOX_MAX_ATTACHMENT_BYTES,
    leaseSeconds: deps.config.INBOX_SEND_LEASE_SECONDS,
    inlineMaxBytes: deps.config.INBOX_INLINE_ATTACHMENT_BYTES,
  };
}

/** The other answer of a send route: held for approval. */
export const heldSendResponse = {
  202: {
    description: 'Held: the inbox’s send_policy is `approval`; the send is a draft pending approval',
    schema: heldSendSchema,
  },
};

/** Writes a held send's 202 itself; a send made is returned for the route's own status (201). */
export function answerSend(res: Response, outcome: SendResult | HeldSend): SendResult | undefined {
  if ('draft' in outcome) {
    res.status(202).json(outcome);
    return undefined;
  }
  return outcome;
}

/** A provider's own words for a refusal, as UpstreamError carries them; anything else in general terms. */
function failureReason(error: unknown): string {
  return error instanceof AppError ? error.message : 'The transport failed';
}

/**
 * Decodes base64 attachments, refusing more than `maxBytes` in all, `carried` ones (a forward's)
 * included (413), before anything is decoded, stored or sent.
 */
function decodeAttachments(
  attachments: { filename: string; content_type: string; content: string }[],
  maxBytes: number,
  carried: AttachmentFile[],
): AttachmentFile[] {
  // The schema has checked that each content is base64.
  const total =
    attachments.reduce((sum, attachment) => sum + (base64ByteLength(attachment.content) ?? 0), 0) +
    carried.reduce((sum, file) => sum + file.content.length, 0);
  checkAttachmentTotal(total, maxBytes);
  return [
    ...carried,
    ...attachments.map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.content_type,
      content: Buffer.from(attachment.content, 'base64'),
    })),
  ];
}

/** 413 when a message's attachments total more than `maxBytes`. */
export function checkAttachmentTotal(total: number, maxBytes: number): void {
  if (total > maxBytes) {
    throw new PayloadTooLargeError(`Attachments total ${total} bytes; at most ${maxBytes} bytes are allowed per message`, {
      limit_bytes: maxBytes,
      size_bytes: total,
    });
  }
}
