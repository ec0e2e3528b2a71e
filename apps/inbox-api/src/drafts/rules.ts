/**
 * A draft's life as pure rules: which action moves which status where, and which send_at is
 * acceptable. The service applies them with a conditional update (status = the one read), so that
 * of two requests racing on one draft, one moves it and the other gets the 409 these rules give.
 */

export const DRAFT_STATUSES = ['draft', 'pending_approval', 'scheduled', 'sent', 'rejected', 'cancelled'] as const;
export type DraftStatus = (typeof DRAFT_STATUSES)[number];

export type DraftAction =
  /** PATCH: change what it says. */
  | 'edit'
  /** POST /send (or a send held for approval): to approval, or to the queue. */
  | 'submit'
  | 'approve'
  | 'reject'
  /** DELETE. */
  | 'cancel'
  /** The send itself, once it is due (the job, or at once). */
  | 'dispatch'
  /** A scheduled draft never approved, due while its inbox is under the `approval` policy: it waits for approval. */
  | 'hold'
  /** A send that cannot be made any more (its recipient is now blocked, its inbox gone). */
  | 'abandon';

export type SendPolicy = 'direct' | 'approval';

/** Why an action is refused in a status: the 409's message. */
export class DraftTransitionError extends Error {
  constructor(
    readonly status: DraftStatus,
    readonly action: DraftAction,
  ) {
    super(`A ${status.replace('_', ' ')} draft cannot be ${PAST[action]}`);
  }
}

const PAST: Record<DraftAction, string> = {
  edit: 'changed',
  submit: 'sent',
  approve: 'approved',
  reject: 'rejected',
  cancel: 'cancelled',
  dispatch: 'sent',
  hold: 'held',
  abandon: 'abandoned',
};

/**
 * The status an action leads to, or DraftTransitionError. `submit` goes to `pending_approval` under
 * the `approval` policy, else to `scheduled` (sent at once when it has no send_at in the future);
 * `approve` schedules; only a scheduled draft is dispatched, or held for approval when its inbox
 * came under the `approval` policy after it was scheduled. sent, rejected and cancelled are final.
 */
export function nextStatus(status: DraftStatus, action: DraftAction, policy: SendPolicy = 'direct'): DraftStatus {
  switch (action) {
    case 'edit':
      if (status === 'draft') return 'draft';
      break;
    case 'submit':
      if (status === 'draft') return policy === 'approval' ? 'pending_approval' : 'scheduled';
      // Sending a scheduled draft again: it stays scheduled, and goes now when due (as when a cap or the
      // provider held it back), else at its send_at.
      if (status === 'scheduled') return 'scheduled';
      break;
    case 'approve':
      if (status === 'pending_approval') return 'scheduled';
      break;
    case 'reject':
      if (status === 'pending_approval') return 'rejected';
      break;
    case 'cancel':
    case 'abandon':
      if (status === 'draft' || status === 'pending_approval' || status === 'scheduled') return 'cancelled';
      break;
    case 'dispatch':
      if (status === 'scheduled') return 'sent';
      break;
    case 'hold':
      if (status === 'scheduled') return 'pending_approval';
      break;
  }
  throw new DraftTransitionError(status, action);
}

/** Why `sendAt` cannot be a draft's send time at `now` (in the past, or more than a year ahead), or undefined. */
export function sendAtProblem(sendAt: Date, now: Date): string | undefined {
  if (sendAt.getTime() <= now.getTime()) return 'Must be in the future';
  if (sendAt.getTime() - now.getTime() > 365 * 24 * 3600 * 1000) return 'Must be at most one year ahead';
  return undefined;
}

/** Seconds from `now` until `sendAt` (0 when due). */
export function secondsUntil(sendAt: Date | null, now: Date): number {
  return sendAt ? Math.max(0, Math.ceil((sendAt.getTime() - now.getTime()) / 1000)) : 0;
}
