import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { SendMessageInput } from '../api-client.js';
import { sendOutcomeSchema } from '../api-views.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, sendResult } from './results.js';

const messageFields = {
  inbox_id: z.string().describe('Id of the inbox to send from (from create_inbox)'),
  recipient: z.string().describe('The one address to send to, e.g. "someone@example.com"'),
  subject: z.string().describe('Subject line; when replying, keep the thread subject (a "Re: " prefix is fine)'),
  body: z.string().describe('Message body in Markdown; it is sent as HTML with a plain-text part'),
  thread_id: z
    .string()
    .optional()
    .describe('Reply into this thread (a `thread_id` from an earlier result); omit to start a new conversation'),
};

const sendEmailInput = z.strictObject(messageFields);

const sendEmailWithAttachmentsInput = z.strictObject({
  ...messageFields,
  attachments: z
    .array(
      z.strictObject({
        filename: z.string().describe('File name shown to the recipient, e.g. "report.pdf"'),
        content_type: z.string().describe('MIME type, e.g. "application/pdf", "image/png", "text/csv"'),
        content: z.string().describe('The file content, base64-encoded'),
      }),
    )
    .describe('Files to attach'),
});

// Sending reaches people outside this service, and repeating it sends the mail again.
const sendAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

type MessageArgs = z.output<typeof sendEmailInput> & { attachments?: SendMessageInput['attachments'] };

function toSendInput(args: MessageArgs): SendMessageInput {
  return {
    inbox_id: args.inbox_id,
    to: [args.recipient],
    subject: args.subject,
    body: args.body,
    ...(args.thread_id !== undefined && { reply_to_thread_id: args.thread_id }),
    ...(args.attachments !== undefined && { attachments: args.attachments }),
  };
}

export function registerSendTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'send_email',
    {
      title: 'Send e-mail',
      description:
        'Send an e-mail from one of your inboxes to one recipient. Without `thread_id` it starts a new thread; with `thread_id` ' +
        'it replies in that thread, and the threading headers (In-Reply-To, References) are set for you. Returns the sent ' +
        "message's `id` and its `thread_id`: pass that to wait_for_reply to wait for the answer. To attach files, use " +
        'send_email_with_attachments. Where the inbox requires approval, nothing is sent yet: the answer says so and ' +
        'holds only `draft`, the draft awaiting approval.',
      inputSchema: sendEmailInput,
      outputSchema: sendOutcomeSchema,
      annotations: sendAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'send_email', signal: ctx.mcpReq.signal }, async () =>
        sendResult(await deps.api.sendMessage(toSendInput(args), ctx.mcpReq)),
      ),
  );

  server.registerTool(
    'send_email_with_attachments',
    {
      title: 'Send e-mail with attachments',
      description:
        'Send an e-mail with files attached; otherwise the same as send_email (one recipient, Markdown body, optional ' +
        '`thread_id` to reply in a thread). Each attachment is `{filename, content_type, content}` with the content ' +
        'base64-encoded; the total size is limited by the service (25 MB by default). The result lists each stored ' +
        'attachment with its id, filename, content_type and size.',
      inputSchema: sendEmailWithAttachmentsInput,
      outputSchema: sendOutcomeSchema,
      annotations: sendAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'send_email_with_attachments', signal: ctx.mcpReq.signal }, async () =>
        sendResult(await deps.api.sendMessage(toSendInput(args), ctx.mcpReq)),
      ),
  );
}
