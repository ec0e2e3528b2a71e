import type { Logger } from '@repo/http';
import type { ObjectStorage } from '@repo/storage';
import type { InterruptedSend, MailTransport, OutboundMail } from '../adapters/mail/index.js';
import type { Database } from '../database.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Attachment, Message } from '../generated/prisma/client.js';
import { readAttachment } from './attachments.js';
import { interruptedOutcome, markFailed, markSent } from './outbox.js';
import { toSendResult } from './records.js';

export interface InterruptedSendDeps {
  db: Database;
  storage: ObjectStorage;
  mailer: MailTransport;
  logger: Logger;
  jobs: JobQueue;
  leaseSeconds: number;
}

/** How many interrupted sends one statement claims. */
const BATCH = 50;
/** A transport that cannot tell (its look-up fails) is asked again each round for this long. */
const GIVE_UP_AFTER_MS = 24 * 3600 * 1000;

/**
 * Resolves the sends still `sending` past their lease: their process stopped (a crash, a kill)
 * between recording them and recording the transport's answer. Each is claimed first (its lease
 * extended, rows locked with SKIP LOCKED), so replicas never resolve the same send twice; then
 * the transport says whether it took the message (outbox.ts, interruptedOutcome). Returns how
 * many were resolved.
 */
export async function resolveInterruptedSends(deps: InterruptedSendDeps): Promise<number> {
  let resolved = 0;
  for (;;) {
    const claimed = await deps.db.$queryRaw<{ id: string }[]>`
      UPDATE messages SET lease_until = now() + make_interval(secs => ${deps.leaseSeconds})
       WHERE id IN (SELECT id FROM messages
                     WHERE status = 'sending' AND lease_until < now()
                     ORDER BY lease_until LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    for (const { id } of claimed) {
      if (await resolveSend(deps, id)) resolved++;
    }
    if (claimed.length < BATCH) return resolved;
  }
}

async function resolveSend(deps: InterruptedSendDeps, messageId: string): Promise<boolean> {
  const message = await deps.db.message.findUnique({ where: { id: messageId }, include: { attachments: true } });
  if (!message || message.status !== 'sending') return false;
  let confirmation: InterruptedSend = 'unknown';
  try {
    confirmation =
      (await deps.mailer.resolveInterrupted?.({
        messageId: message.providerMessageId,
        mail: () => mailOf(deps.storage, message),
      })) ?? 'unknown';
  } catch (error) {
    // No answer now: ask again after the new lease, unless the send is too old to wait for.
    if (Date.now() - message.createdAt.getTime() < GIVE_UP_AFTER_MS) {
      deps.logger.warn({ err: error, messageId }, 'could not learn how an interrupted send ended; trying again later');
      return false;
    }
  }
  const outcome = interruptedOutcome(deps.mailer.name, confirmation);
  if (outcome.status === 'sent') {
    await markSent(deps.db, {
      messageId,
      provider: deps.mailer.name,
      providerMessageId: message.providerMessageId,
      // Mailgun (the one transport that can confirm a send) names it in its events by our Message-ID without brackets.
      transportMessageId: deps.mailer.name === 'mailgun' ? message.providerMessageId.replace(/^<|>$/g, '') : undefined,
      result: toSendResult(message, message.attachments),
    });
  } else {
    await markFailed(
      deps.db,
      { messageId, provider: deps.mailer.name, reason: outcome.reason!, notSent: confirmation === 'not-sent' },
      // The draft's job may be the one that stopped with the process: its next attempt is queued here.
      (tx, draftId) => deps.jobs.send('send-draft', { draft_id: draftId }, { tx }),
    );
  }
  deps.logger.info({ messageId, status: outcome.status }, 'resolved an interrupted send');
  return true;
}

/** The mail as it was handed to the transport, rebuilt from its record and stored attachments. */
async function mailOf(storage: ObjectStorage, message: Message & { attachments: Attachment[] }): Promise<OutboundMail> {
  return {
    from: message.fromAddress,
    to: message.toAddresses,
    cc: message.ccAddresses,
    replyTo: message.replyToAddresses,
    subject: message.subject,
    text: message.text,
    html: message.html,
    messageId: message.providerMessageId,
    inReplyTo: message.inReplyTo ?? undefined,
    references: message.references?.split(' '),
    attachments: await Promise.all(
      message.attachments.map(async (attachment) => ({
        filename: attachment.filename,
        contentType: attachment.contentType,
        content: await readAttachment(storage, attachment),
      })),
    ),
  };
}
