import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { draftSchema, heldSendSchema } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { draftResult, runTool, sendResult } from './results.js';

const addresses = (what: string) => z.array(z.string()).optional().describe(what);

const createDraftInput = z.strictObject({
  inbox_id: z.string().describe('Id of the inbox to send from'),
  to: z.array(z.string()).min(1).describe('Recipient addresses'),
  subject: z.string().describe('Subject line'),
  body: z.string().describe('Message body in Markdown; it is sent as HTML with a plain-text part'),
  cc: addresses('Copy recipients (Cc header)'),
  bcc: addresses('Blind copy recipients: on the envelope only, never in any header'),
  thread_id: z.string().optional().describe('Reply into this thread (a `thread_id` from an earlier result)'),
  labels: z.array(z.string()).optional().describe('Labels for the sent message besides `sent`'),
  send_at: z
    .string()
    .optional()
    .describe('When to send it (ISO 8601, in the future, at most a year ahead): schedules it at once; omit to keep it a draft'),
  attachments: z
    .array(
      z.strictObject({
        filename: z.string().describe('File name shown to the recipient'),
        content_type: z.string().describe('MIME type'),
        content: z.string().describe('The file content, base64-encoded'),
      }),
    )
    .optional()
    .describe('Files to attach'),
});

const sendDraftInput = z.strictObject({ draft_id: z.string().describe('Id of the draft (from create_draft)') });

// A draft is the service's own record, and nothing leaves yet; each call writes another draft.
const draftAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
// Sending reaches people outside; a second send of the same draft is refused (409), not sent twice.
const sendDraftAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

export function registerDraftTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'create_draft',
    {
      title: 'Create a draft',
      description:
        'Write a mail to send later: the arguments of a send (inbox, recipients, subject, Markdown body, optional cc, bcc, ' +
        'thread_id, labels, attachments). Nothing is sent: without `send_at` it stays a `draft` until send_draft; with ' +
        '`send_at` it is scheduled at once (where the inbox requires approval, it first awaits approval). Returns the ' +
        'draft with its `id` and `status`.',
      inputSchema: createDraftInput,
      outputSchema: draftSchema,
      annotations: draftAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'create_draft', signal: ctx.mcpReq.signal }, async () => {
        const { thread_id, ...input } = args;
        const draft = await deps.api.createDraft(
          { ...input, ...(thread_id !== undefined && { reply_to_thread_id: thread_id }) },
          ctx.mcpReq,
        );
        return draftResult(draft);
      }),
  );

  server.registerTool(
    'send_draft',
    {
      title: 'Send a draft',
      description:
        'Send a draft written with create_draft. Answers `{draft}`: `sent` with its `message_id`, or `scheduled` for its ' +
        '`send_at` (or with `last_error` when a cap or the provider held it back: it is tried again). Where the inbox ' +
        'requires approval, nothing is sent yet: the answer says so plainly and the draft is `pending_approval` until ' +
        'someone with the `approve` permission approves it. A draft already sent, rejected or cancelled is a `conflict`.',
      inputSchema: sendDraftInput,
      outputSchema: heldSendSchema,
      annotations: sendDraftAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'send_draft', signal: ctx.mcpReq.signal }, async () =>
        sendResult(await deps.api.sendDraft(args.draft_id, ctx.mcpReq)),
      ),
  );
}
