import { AppError, ConflictError, NotFoundError, PayloadTooLargeError, UnauthorizedError } from '@repo/errors';
import { KEY_REVOKED, keyActor } from '../api-keys/directory.js';
import { type Actor, inboxFilter, type Scope, scopeOf } from '../api-keys/scope.js';
import { type Database, prismaStatements } from '../database.js';
import { appendEvents, type EventType } from '../events/log.js';
import type { Draft, Prisma } from '../generated/prisma/client.js';
import { findInbox } from '../inboxes/service.js';
import type { JobQueue } from '../jobs/queue.js';
import { readAttachment } from '../messages/attachments.js';
import { base64ByteLength } from '../messages/base64.js';
import { checkOutbound } from '../messages/policy.js';
import type { Deps } from '../deps.js';
import { type SendDeps, sendDepsOf, sendMessage, type SendOptions } from '../messages/send.js';
import { isUuid } from '../shared/ids.js';
import { NEWEST_FIRST, page, type Page, readPage } from '../shared/schemas.js';
import { findThread } from '../threads/service.js';
import { actorName, type DraftInput, draftEvent, toDraftResponse } from './records.js';
import { type DraftAction, type DraftStatus, DraftTransitionError, nextStatus, type SendPolicy, secondsUntil } from './rules.js';
import type { CreateDraftInput, DraftResponse, ListDraftsQuery, UpdateDraftInput } from './schemas.js';

export interface DraftDeps extends SendDeps {
  jobs: JobQueue;
  /**
   * A draft due now is sent at once, and a job queued with it this many seconds later sends it
   * if that did not end (the process stopped, the provider failed): the send's lease.
   */
  backstopSeconds: number;
}

export function draftDepsOf(deps: Deps): DraftDeps {
  return { ...sendDepsOf(deps), jobs: deps.jobs, backstopSeconds: deps.config.INBOX_SEND_LEASE_SECONDS };
}

/** Who sends a draft that no organization API key wrote (an operator's, or in open mode) once it is due. */
const DISPATCHER: Actor = { kind: 'operator', limitKey: 'drafts' };

/**
 * Who sends a draft: the API key that wrote it (its scope, its send cap; its revocation stops the
 * send), undefined once that key is revoked or deleted; DISPATCHER for a draft no key wrote.
 */
async function senderOf(db: Database, draft: Draft): Promise<Actor | undefined> {
  if (draft.createdBy === null) return DISPATCHER;
  const key = await db.apiKey.findFirst({ where: { id: draft.createdBy, revokedAt: null } });
  return key ? keyActor(key) : undefined;
}

/** The draft within the scope (its inbox live and reachable), or 404. */
async function findDraft(db: Database, scope: Scope, draftId: string): Promise<Draft> {
  const draft = isUuid(draftId)
    ? await db.draft.findFirst({ where: { id: draftId, inbox: { deletedAt: null, ...inboxFilter(scope) } } })
    : null;
  if (!draft) throw new NotFoundError('Draft not found', { draft_id: draftId });
  return draft;
}

async function organizationOf(db: Database, inboxId: string): Promise<string> {
  return (await db.inbox.findUniqueOrThrow({ where: { id: inboxId }, select: { organizationId: true } })).organizationId;
}

/** Checks what a draft names is within the scope (404) and its attachments fit (413), before it is stored. */
async function checkDraftInput(deps: DraftDeps, scope: Scope, input: DraftInput): Promise<void> {
  const inbox = await findInbox(deps.db, scope, input.inbox_id);
  if (input.reply_to_thread_id !== undefined) {
    await findThread(deps.db, scope, { threadId: input.reply_to_thread_id, inboxId: inbox.id });
  }
  checkAttachmentsFit(input.attachments ?? [], deps.maxAttachmentBytes);
}

/** 413 when the attachments total more than a message may carry. */
function checkAttachmentsFit(attachments: readonly { content: string }[], maxBytes: number): void {
  const total = attachments.reduce((sum, attachment) => sum + (base64ByteLength(attachment.content) ?? 0), 0);
  if (total > maxBytes) {
    throw new PayloadTooLargeError(`Attachments total ${total} bytes; at most ${maxBytes} bytes are allowed per message`, {
      limit_bytes: maxBytes,
      size_bytes: total,
    });
  }
}

/** Writes a draft (`draft`); with `send_at`, submits it at once (scheduled, or pending approval). */
export async function createDraft(deps: DraftDeps, actor: Actor, body: CreateDraftInput): Promise<DraftResponse> {
  const { send_at: sendAt, ...input } = body;
  await checkDraftInput(deps, scopeOf(actor), input);
  const organizationId = await organizationOf(deps.db, input.inbox_id);
  // Written to be scheduled: what would refuse its submission refuses it before anything is written.
  if (sendAt) await gateOf(deps, actor, { id: input.inbox_id, organizationId }, input, { scheduling: true });
  const draft = await deps.db.$transaction(async (tx) => {
    const created = await tx.draft.create({
      data: {
        inboxId: input.inbox_id,
        status: 'draft',
        input: input,
        sendAt: sendAt ?? null,
        createdBy: actor.kind === 'key' ? actor.keyId : null,
      },
    });
    await appendEvents(prismaStatements(tx), [draftEvent('draft.created', organizationId, created)]);
    return created;
  });
  if (sendAt) return (await submitDraft(deps, actor, draft.id, { scheduling: true })).draft;
  return toDraftResponse(draft);
}

export async function listDrafts(db: Database, scope: Scope, query: ListDraftsQuery): Promise<Page<DraftResponse>> {
  if (query.inbox_id !== undefined) await findInbox(db, scope, query.inbox_id);
  const where: Prisma.DraftWhereInput = {
    inbox: { deletedAt: null, ...inboxFilter(scope) },
    ...(query.inbox_id !== undefined && { inboxId: query.inbox_id }),
    ...(query.status && { status: query.status }),
  };
  const { rows, total, next } = await readPage(
    query,
    'drafts',
    NEWEST_FIRST,
    (after, take, skip) =>
      db.draft.findMany({ where: { AND: [where, after] }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take, skip }),
    () => db.draft.count({ where }),
  );
  return page(rows.map(toDraftResponse), total, next);
}

export async function getDraft(db: Database, scope: Scope, draftId: string): Promise<DraftResponse> {
  return toDraftResponse(await findDraft(db, scope, draftId));
}

/** Changes a draft still being written (409 once submitted); `send_at: null` clears the time. */
export async function updateDraft(
  deps: DraftDeps,
  actor: Actor,
  draftId: string,
  patch: UpdateDraftInput,
): Promise<DraftResponse> {
  const scope = scopeOf(actor);
  const draft = await findDraft(deps.db, scope, draftId);
  allowed(draft.status, 'edit');
  const { send_at: sendAt, ...changes } = patch;
  const input: DraftInput = { ...(draft.input as unknown as DraftInput), ...changes, inbox_id: draft.inboxId };
  await checkDraftInput(deps, scope, input);
  const updated = await move(deps.db, draft, 'edit', {
    input: input,
    ...(sendAt !== undefined && { sendAt }),
  });
  return toDraftResponse(updated);
}

/** DELETE: a draft not sent, rejected or cancelled yet is cancelled (a scheduled one is then not sent). */
export async function cancelDraft(deps: DraftDeps, actor: Actor, draftId: string): Promise<DraftResponse> {
  const draft = await findDraft(deps.db, scopeOf(actor), draftId);
  return toDraftResponse(await move(deps.db, draft, 'cancel', {}, 'draft.cancelled'));
}

/**
 * POST /send. The kill switches and send lists are asked first (403, as a send is); then under
 * the `approval` policy the draft waits for approval (held: true, 202), otherwise it is scheduled
 * and, when it has no send_at in the future, sent at once.
 */
export async function submitDraft(
  deps: DraftDeps,
  actor: Actor,
  draftId: string,
  options: { scheduling?: boolean } = {},
): Promise<{ draft: DraftResponse; held: boolean }> {
  const draft = await findDraft(deps.db, scopeOf(actor), draftId);
  const input = draft.input as unknown as DraftInput;
  const organizationId = await organizationOf(deps.db, draft.inboxId);
  const gate = await gateOf(deps, actor, { id: draft.inboxId, organizationId }, input, options);
  if (gate === 'hold' && draft.status === 'draft') {
    const held = await move(deps.db, draft, 'submit', {}, 'draft.pending_approval', 'approval');
    return { draft: toDraftResponse(held), held: true };
  }
  if (draft.status === 'scheduled') {
    // Already scheduled, with its job: nothing is scheduled twice. It goes now when due.
    const now = (await dispatchDraft(deps, draft.id)).draft ?? draft;
    return { draft: toDraftResponse(now), held: now.status === 'pending_approval' };
  }
  const scheduled = await schedule(deps, draft, 'submit');
  return { draft: toDraftResponse(scheduled), held: false };
}

/** The safety gate's answer to submitting a draft: 403 for a blocked recipient; held or sent. */
async function gateOf(
  deps: DraftDeps,
  actor: Actor,
  inbox: { id: string; organizationId: string },
  input: DraftInput,
  options: { scheduling?: boolean },
): Promise<'send' | 'hold'> {
  try {
    return await checkOutbound(deps, { actor, inbox, recipients: recipientsOf(input), stage: 'submit' });
  } catch (error) {
    // A draft written for later may be scheduled while a kill switch is off: it waits (its send is refused until then).
    if (!(options.scheduling && error instanceof AppError && error.code === 'sending_disabled')) throw error;
    const { sendPolicy } = await deps.db.inbox.findUniqueOrThrow({ where: { id: inbox.id }, select: { sendPolicy: true } });
    return sendPolicy === 'approval' ? 'hold' : 'send';
  }
}

/** Approves a draft pending approval (409 otherwise, also to the second of two approvals), then sends it when due. */
export async function approveDraft(deps: DraftDeps, actor: Actor, draftId: string): Promise<DraftResponse> {
  const draft = await findDraft(deps.db, scopeOf(actor), draftId);
  const approved = await schedule(deps, draft, 'approve', { approvedAt: new Date(), approvedBy: actorName(actor) });
  return toDraftResponse(approved);
}

export async function rejectDraft(
  deps: DraftDeps,
  actor: Actor,
  draftId: string,
  reason: string | undefined,
): Promise<DraftResponse> {
  const draft = await findDraft(deps.db, scopeOf(actor), draftId);
  const rejected = await move(
    deps.db,
    draft,
    'reject',
    { rejectedAt: new Date(), rejectionReason: reason ?? null, approvedBy: actorName(actor) },
    'draft.rejected',
  );
  return toDraftResponse(rejected);
}

/**
 * Moves a draft to `scheduled` (submit, approve) with, in the same transaction, the job that sends
 * it at send_at (or, when due now, a backstop for the send made at once here), then sends it now
 * when due.
 */
async function schedule(
  deps: DraftDeps,
  draft: Draft,
  action: 'submit' | 'approve',
  data: Prisma.DraftUpdateManyMutationInput = {},
): Promise<Draft> {
  const wait = secondsUntil(draft.sendAt, new Date());
  const event: EventType = action === 'approve' ? 'draft.approved' : 'draft.scheduled';
  const moved = await move(deps.db, draft, action, data, event, 'direct', async (tx) => {
    await deps.jobs.send('send-draft', { draft_id: draft.id }, { tx, delaySeconds: wait > 0 ? wait : deps.backstopSeconds });
  });
  deps.crashPoint(action === 'approve' ? 'draft:approved' : 'draft:scheduled');
  if (wait > 0) return moved;
  return (await dispatchDraft(deps, draft.id)).draft ?? moved;
}

/**
 * Applies `action` to the draft as it was read: a conditional update on its status, so that of
 * two racing requests one moves it and the other gets 409; with the event (last) and `also`.
 */
async function move(
  db: Database,
  draft: Draft,
  action: DraftAction,
  data: Prisma.DraftUpdateManyMutationInput,
  event?: EventType,
  policy: 'direct' | 'approval' = 'direct',
  also?: (tx: Prisma.TransactionClient) => Promise<void>,
): Promise<Draft> {
  if (action === 'cancel') refuseWhileSending(draft);
  const status = allowed(draft.status, action, policy);
  const organizationId = await organizationOf(db, draft.inboxId);
  return db.$transaction(async (tx) => {
    const [moved] = await tx.draft.updateManyAndReturn({
      where: { id: draft.id, status: draft.status, messageId: draft.messageId },
      data: { ...data, status },
    });
    if (!moved) {
      const now = await tx.draft.findUnique({ where: { id: draft.id } });
      if (!now) throw new NotFoundError('Draft not found', { draft_id: draft.id });
      if (action === 'cancel') refuseWhileSending(now);
      throw transitionConflict(new DraftTransitionError(now.status, action));
    }
    await also?.(tx);
    if (event) await appendEvents(prismaStatements(tx), [draftEvent(event, organizationId, moved)]);
    return moved;
  });
}

/**
 * 409 for a scheduled draft whose message is recorded: its send is under way (or its outcome is
 * being settled), and a cancel could no longer stop it.
 */
function refuseWhileSending(draft: Draft): void {
  if (draft.status === 'scheduled' && draft.messageId !== null) {
    throw new ConflictError('The draft is being sent: its message is recorded and cannot be stopped', {
      status: draft.status,
      message_id: draft.messageId,
    });
  }
}

/** move(), or the draft as it is now when another request or attempt moved it first. */
function moveUnlessMoved(...args: Parameters<typeof move>): Promise<Draft | null> {
  const [db, draft] = args;
  return move(...args).catch(async (error: unknown) => {
    if (error instanceof ConflictError) return db.draft.findUnique({ where: { id: draft.id } });
    throw error;
  });
}

function transitionConflict(error: DraftTransitionError): ConflictError {
  return new ConflictError(error.message, { status: error.status });
}

/** nextStatus, with a refused transition as the 409 the API answers. */
function allowed(status: DraftStatus, action: DraftAction, policy?: SendPolicy): DraftStatus {
  try {
    return nextStatus(status, action, policy);
  } catch (error) {
    if (error instanceof DraftTransitionError) throw transitionConflict(error);
    throw error;
  }
}

/** Every recipient of a draft's send. */
function recipientsOf(input: DraftInput & { cc?: string[]; bcc?: string[] }): string[] {
  return [...input.to, ...(input.cc ?? []), ...(input.bcc ?? [])];
}

/** What a send attempt of a draft came to; `retryAfterSeconds` when it is to be tried again. */
export interface Dispatch {
  draft: Draft | null;
  retryAfterSeconds?: number;
}

/** Failures that pass: tried again later. Others (a recipient now blocked, the thread gone) end the draft. */
const RETRY_AFTER_SECONDS: Partial<Record<string, number>> = {
  sending_disabled: 60,
  rate_limited: 60,
  conflict: 30,
  provider_error: 60,
  upstream_error: 60,
  service_unavailable: 30,
  internal_error: 60,
};

/** The draft was cancelled, or claimed by another attempt, before its message was recorded. */
class DraftTaken extends Error {}

/**
 * Sends a scheduled draft that is due, exactly once however often it is called (by the request
 * that approved it, by its job on any replica, again after a crash). The draft claims its message
 * in the transaction that records it (its message_id, before anything is sent): a cancel after
 * that is a 409, a cancel before it means nothing is recorded or sent, and an attempt that finds
 * the claim settles the draft by that message instead of sending again (settleClaimed). The send
 * also carries the Idempotency-Key `draft:<id>`. A kill switch or a cap keeps it scheduled
 * (retryAfterSeconds).
 */
export async function dispatchDraft(deps: DraftDeps, draftId: string): Promise<Dispatch> {
  const draft = await deps.db.draft.findUnique({ where: { id: draftId } });
  if (!draft || draft.status !== 'scheduled') return { draft };
  if (draft.messageId !== null) return settleClaimed(deps, draft, draft.messageId);
  const wait = secondsUntil(draft.sendAt, new Date());
  if (wait > 0) return { draft, retryAfterSeconds: wait };
  const { sendPolicy } = await deps.db.inbox.findUniqueOrThrow({ where: { id: draft.inboxId }, select: { sendPolicy: true } });
  if (sendPolicy === 'approval' && draft.approvedAt === null) {
    return { draft: await moveUnlessMoved(deps.db, draft, 'hold', {}, 'draft.pending_approval', 'approval') };
  }
  const actor = await senderOf(deps.db, draft);
  if (!actor) return settleFailure(deps, draft, new UnauthorizedError(`${KEY_REVOKED}: the draft it wrote is not sent`));
  let messageId: string;
  try {
    const result = await sendMessage(deps, {
      actor,
      input: draft.input as unknown as DraftInput,
      idempotencyKey: `draft:${draft.id}`,
      approved: true,
      ...(await originOf(deps, draft)),
      onRecorded: async (tx, recorded) => {
        const { count } = await tx.draft.updateMany({
          where: { id: draft.id, status: 'scheduled', messageId: null },
          data: { messageId: recorded },
        });
        if (count === 0) throw new DraftTaken();
      },
    });
    if (!('id' in result)) throw new Error('an approved send was held');
    messageId = result.id;
  } catch (error) {
    if (error instanceof DraftTaken) return { draft: await deps.db.draft.findUnique({ where: { id: draft.id } }) };
    // A transport that refused the message freed the claim with it (markFailed).
    return settleFailure(deps, draft, error);
  }
  deps.crashPoint('draft:sent');
  return { draft: await markDraftSent(deps, { ...draft, messageId }) };
}

/** The claimed draft `sent` (once: another attempt may have marked it first). */
function markDraftSent(deps: DraftDeps, draft: Draft): Promise<Draft | null> {
  return moveUnlessMoved(deps.db, draft, 'dispatch', { sentAt: new Date(), lastError: null }, 'draft.sent');
}

/**
 * A draft whose message an earlier attempt recorded: that message is its send. Sent: the draft is
 * `sent`. Still sending: looked at again once the message's lease ends (the reconciler settles
 * sends whose process stopped). Failed, or gone with its inbox: the provider may have taken it
 * before the process stopped (an interrupted send whose outcome the provider cannot tell), so it
 * is not sent a second time; the draft is `cancelled`, saying so.
 */
async function settleClaimed(deps: DraftDeps, draft: Draft, messageId: string): Promise<Dispatch> {
  const message = await deps.db.message.findUnique({ where: { id: messageId }, select: { status: true, leaseUntil: true } });
  if (message?.status === 'sent') return { draft: await markDraftSent(deps, draft) };
  if (message?.status === 'sending') {
    return { draft, retryAfterSeconds: Math.min(deps.backstopSeconds, secondsUntil(message.leaseUntil, new Date()) + 1) };
  }
  const lastError = `interrupted: its send (message ${messageId}) stopped with its outcome unknown; it is not sent again`;
  return { draft: await moveUnlessMoved(deps.db, draft, 'abandon', { lastError }, 'draft.cancelled') };
}

/** What a held reply or forward needs again when it is sent: the message answered, the forwarded message's files. */
async function originOf(deps: DraftDeps, draft: Draft): Promise<Pick<SendOptions, 'answering' | 'forwarding'>> {
  const origin = (draft.origin ?? {}) as {
    answering?: NonNullable<SendOptions['answering']>;
    forwarding_message_id?: string;
  };
  if (!origin.forwarding_message_id) return origin.answering ? { answering: origin.answering } : {};
  const attachments = await deps.db.attachment.findMany({
    where: { messageId: origin.forwarding_message_id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const files = await Promise.all(
    attachments.map(async (attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      content: await readAttachment(deps.storage, attachment),
    })),
  );
  return { forwarding: { id: origin.forwarding_message_id, files } };
}

async function settleFailure(deps: DraftDeps, draft: Draft, error: unknown): Promise<Dispatch> {
  if (!(error instanceof AppError)) throw error;
  const retry = RETRY_AFTER_SECONDS[error.code];
  if (retry !== undefined) {
    const retryAfter =
      error.code === 'rate_limited' && typeof error.details.retry_after_seconds === 'number'
        ? error.details.retry_after_seconds
        : retry;
    const noted = await deps.db.draft.updateManyAndReturn({
      where: { id: draft.id, status: 'scheduled', messageId: null },
      data: { lastError: `${error.code}: ${error.message}` },
    });
    // A held draft is looked at again within the send lease at most, so that it goes soon after its kill switch is on again.
    return { draft: noted[0] ?? draft, retryAfterSeconds: Math.min(retryAfter, deps.backstopSeconds) };
  }
  return {
    draft: await moveUnlessMoved(deps.db, draft, 'abandon', { lastError: `${error.code}: ${error.message}` }, 'draft.cancelled'),
  };
}

/** Drafts a kill switch held that one call sends at once; more wait for their own next attempt. */
const RESUMED_AT_ONCE = 1000;

/**
 * Sends the drafts a kill switch held (scheduled, due, their last attempt refused as
 * `sending_disabled`) of an inbox or an organization whose sending was just enabled again, rather
 * than at their next attempt, up to a minute later. In the background, so that the change answers
 * at once; each draft's job stays its backstop, and the claim in dispatchDraft sends each once
 * whoever comes first. A draft still held (its organization's switch, a cap) waits for its job.
 */
export function resumeHeldDrafts(deps: DraftDeps, where: { inboxId: string } | { organizationId: string }): void {
  void (async () => {
    const held = await deps.db.draft.findMany({
      where: {
        status: 'scheduled',
        messageId: null,
        lastError: { startsWith: 'sending_disabled' },
        OR: [{ sendAt: null }, { sendAt: { lte: new Date() } }],
        ...('inboxId' in where ? { inboxId: where.inboxId } : { inbox: { organizationId: where.organizationId } }),
      },
      select: { id: true },
      orderBy: [{ sendAt: 'asc' }, { id: 'asc' }],
      take: RESUMED_AT_ONCE,
    });
    for (const { id } of held) await dispatchDraft(deps, id);
  })().catch((error: unknown) =>
    deps.logger.error({ err: error, ...where }, 'drafts: sending the drafts a kill switch held failed; their jobs retry them'),
  );
}

/** The job: sends the draft when due, and queues the next attempt while a kill switch or cap holds it. */
export async function runDraftJob(deps: DraftDeps, draftId: string): Promise<void> {
  const { retryAfterSeconds } = await dispatchDraft(deps, draftId);
  if (retryAfterSeconds !== undefined) {
    await deps.jobs.send('send-draft', { draft_id: draftId }, { delaySeconds: Math.max(1, retryAfterSeconds) });
  }
}
