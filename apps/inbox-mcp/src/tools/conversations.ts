import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { messageSchema } from '../api-schemas.js';
import { sendOutcomeSchema } from '../api-views.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, sendResult, untrustedResult } from './results.js';

const messageId = z.string().describe('Id of the message (an `id` from list_messages, search, get_thread or wait_for_reply)');
const addresses = (what: string) => z.array(z.string()).optional().describe(what);
const labels = z
  .array(z.string())
  .optional()
  .describe('Labels to put on the sent message besides `sent`: lower-case slugs of at most 64 characters');

const replyInput = z.strictObject({
  message_id: messageId,
  body: z.string().describe('The reply, in Markdown; it is sent as HTML with a plain-text part'),
  reply_all: z
    .boolean()
    .optional()
    .describe("Also send to the message's other recipients (its other To in To, its Cc in Cc), without your own address"),
  cc: addresses('More copy recipients (Cc header)'),
  bcc: addresses('Blind copy recipients: on the envelope only, never in any header'),
  labels,
});

const forwardInput = z.strictObject({
  message_id: messageId,
  to: z.array(z.string()).min(1).describe('The addresses to forward to'),
  body: z.string().optional().describe('A note above the forwarded message (Markdown)'),
  cc: addresses('Copy recipients (Cc header)'),
  bcc: addresses('Blind copy recipients: on the envelope only, never in any header'),
  labels,
});

const updateLabelsInput = z
  .strictObject({
    message_id: messageId,
    add_labels: z.array(z.string()).optional().describe('Labels to add: lower-case slugs of at most 64 characters'),
    remove_labels: z
      .array(z.string())
      .optional()
      .describe('Labels to remove (wins over add_labels); remove `unread` to mark a message read'),
  })
  .refine((args) => args.add_labels !== undefined || args.remove_labels !== undefined, {
    error: 'add_labels or remove_labels is required',
    path: ['add_labels'],
  });

// Sending reaches people outside this service, and repeating it sends the mail again.
const sendAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
// Labels are the service's own data; the same change twice leaves the same labels. Removing one is not an
// additive update (the specification's test for destructiveHint false), though no mail is lost.
const labelAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** Where senders' text is in a message (the answer of update_labels). */
const MESSAGE_FIELDS = [
  'subject',
  'from_address',
  'to_addresses',
  'cc_addresses',
  'reply_to_addresses',
  'text',
  'html',
  'content_clean',
  'preview',
];

export function registerConversationTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'reply_to_message',
    {
      title: 'Reply to a message',
      description:
        'Reply to one message. The recipients, the `Re:` subject, the thread and the threading headers (In-Reply-To, ' +
        'References) come from the message: to a received message the reply goes to its Reply-To, else its sender; to ' +
        "one you sent, to its recipients again. `reply_all` adds the message's other To recipients to To and its Cc recipients to Cc. " +
        "Returns the sent message's `id` and `thread_id` (pass that to wait_for_reply). Each call sends another mail. " +
        'Where the inbox requires approval, nothing is sent yet: the answer says so and holds only `draft`, awaiting approval.',
      inputSchema: replyInput,
      outputSchema: sendOutcomeSchema,
      annotations: sendAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'reply_to_message', signal: ctx.mcpReq.signal }, async () => {
        const { message_id, ...input } = args;
        // The subject and the recipients come from the replied-to mail, which outside senders wrote.
        return sendResult(await deps.api.replyToMessage(message_id, input, ctx.mcpReq), [
          'subject',
          'to',
          'draft.subject',
          'draft.to',
          'draft.cc',
        ]);
      }),
  );

  server.registerTool(
    'forward_message',
    {
      title: 'Forward a message',
      description:
        'Forward one message, with its attachments, to new recipients (`to`), in a thread of its own: the subject gets ' +
        "`Fwd:`, and the message's header block and text follow your optional `body` note. Returns the sent message " +
        '(its `id`, `thread_id`, recipients, subject, clean content and attachments). Each call sends another mail. ' +
        'Where the inbox requires approval, nothing is sent yet: the answer says so and holds only `draft`, awaiting approval.',
      inputSchema: forwardInput,
      outputSchema: sendOutcomeSchema,
      annotations: sendAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'forward_message', signal: ctx.mcpReq.signal }, async () => {
        const { message_id, ...input } = args;
        // The forwarded text, subject and file names are the original senders'.
        return sendResult(await deps.api.forwardMessage(message_id, input, ctx.mcpReq), [
          'subject',
          'content_clean',
          'attachments[].filename',
          'draft.subject',
          'draft.body',
          'draft.attachments[].filename',
        ]);
      }),
  );

  server.registerTool(
    'update_labels',
    {
      title: 'Update labels',
      description:
        "Change a message's labels: add `add_labels`, remove `remove_labels` (removal wins). Received messages arrive " +
        'labelled `received` and `unread`, sent ones `sent`; mark a message read by removing `unread`. `received` and ' +
        '`sent` cannot be added or removed. Labels are slugs of at most 64 characters (letters, digits, `-`, `_`, `.`, ' +
        '`/`, `:`), lower-cased. Returns the message with its new `labels`.',
      inputSchema: updateLabelsInput,
      outputSchema: messageSchema,
      annotations: labelAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'update_labels', signal: ctx.mcpReq.signal }, async () => {
        const { message_id, ...change } = args;
        return untrustedResult(await deps.api.updateLabels(message_id, change, ctx.mcpReq), MESSAGE_FIELDS);
      }),
  );
}
