import { z } from 'zod';
import { sendMessageBody } from '../messages/schemas.js';
import { id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';
import { DRAFT_STATUSES, sendAtProblem } from './rules.js';

const sendAt = z.iso
  .datetime({ offset: true })
  .transform((value, ctx) => {
    const date = new Date(value);
    const problem = sendAtProblem(date, new Date());
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return date;
  })
  .meta({ description: 'When to send it (ISO 8601): in the future, at most a year ahead', example: '2030-01-01T09:00:00Z' });

/** A draft is a send to make later: POST /v1/messages' body, and when. */
export const createDraftBody = sendMessageBody
  .extend({
    send_at: sendAt.optional().meta({
      description:
        'Schedules it: the draft is `scheduled` at once (`pending_approval` first under the `approval` policy) and sent then',
    }),
  })
  .strict();
export type CreateDraftInput = z.output<typeof createDraftBody>;

export const updateDraftBody = createDraftBody
  .omit({ inbox_id: true })
  .partial()
  .extend({ send_at: sendAt.nullable().optional().meta({ description: 'null: no send time (sent when sent)' }) })
  .strict();
export type UpdateDraftInput = z.output<typeof updateDraftBody>;

export const rejectDraftBody = z
  .object({
    reason: z
      .string()
      .trim()
      .min(1)
      .max(2000, { abort: true })
      .optional()
      .meta({ description: 'Why: shown to the agent on the draft (`rejection_reason`; null without one)' }),
  })
  .strict()
  // No body at all is no reason, as `{}` is.
  .optional();

export const draftParams = z.object({ draft_id: id });

export const listDraftsQuery = z
  .object({ inbox_id: id.optional(), status: z.enum(DRAFT_STATUSES).optional(), ...pageQuery })
  .strict();
export type ListDraftsQuery = z.output<typeof listDraftsQuery>;

export const draftSchema = z
  .object({
    id: z.string(),
    inbox_id: z.string(),
    status: z.enum(DRAFT_STATUSES),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    subject: z.string(),
    body: z.string(),
    attachments: z.array(z.object({ filename: z.string(), content_type: z.string(), size: z.number().int() })),
    reply_to_thread_id: z.string().nullable(),
    send_at: timestamp.nullable(),
    created_by: z.string().nullable().meta({ description: 'The API key that wrote it; null: an operator' }),
    approved_at: timestamp.nullable(),
    approved_by: z.string().nullable().meta({ description: 'The approving API key’s id, or `operator`' }),
    rejected_at: timestamp.nullable(),
    rejection_reason: z.string().nullable(),
    message_id: z.string().nullable().meta({ description: 'The message it was sent as' }),
    sent_at: timestamp.nullable(),
    last_error: z
      .string()
      .nullable()
      .meta({ description: 'Why the last attempt to send it did not (a kill switch, a cap, the provider): it is tried again' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Draft' });
export type DraftResponse = z.input<typeof draftSchema>;

export const draftPage = pageOf(draftSchema).meta({ id: 'DraftPage' });

/** What a send under the `approval` policy answers (202). */
export const heldSendSchema = z.object({ draft: draftSchema }).meta({ id: 'HeldSend' });
