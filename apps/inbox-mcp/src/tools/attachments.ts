import type { McpServer } from '@modelcontextprotocol/server';
import type { ContentBlock } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { type Attachment, attachmentPageSchema } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, untrustedResult } from './results.js';

// The largest page inbox-api serves; the tool takes no paging arguments (the spec gives it none).
const LIST_LIMIT = 200;

const listAttachmentsInput = z
  .strictObject({
    message_id: z.string().optional().describe('Attachments of this message'),
    thread_id: z.string().optional().describe('Attachments of every message in this thread'),
    inbox_id: z.string().optional().describe('Attachments of every message in this inbox'),
  })
  .refine((args) => args.message_id !== undefined || args.thread_id !== undefined || args.inbox_id !== undefined, {
    error: 'message_id, thread_id or inbox_id is required',
    path: ['message_id'],
  });

const getAttachmentContentInput = z.strictObject({
  attachment_id: z.string().describe('Attachment id, from list_attachments or a send result'),
  format: z
    .enum(['base64', 'binary'])
    .default('base64')
    .describe('`base64`: the content as a base64 string in the result; `binary`: the file itself as MCP content'),
});

const attachmentContentSchema = z.object({
  attachment_id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int().describe('Bytes'),
  format: z.enum(['base64', 'binary']),
  content: z.string().optional().describe('The file, base64-encoded; with format `base64` only'),
});

/**
 * The file as MCP content for `format: binary`: images and audio in the blocks clients show or
 * play, anything else as an embedded resource holding the blob with its MIME type.
 */
export function binaryContent(attachment: Attachment, base64: string): ContentBlock {
  const mimeType = attachment.content_type;
  if (mimeType.startsWith('image/')) return { type: 'image', data: base64, mimeType };
  if (mimeType.startsWith('audio/')) return { type: 'audio', data: base64, mimeType };
  return { type: 'resource', resource: { uri: attachment.download_url, mimeType, blob: base64 } };
}

const readAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function registerAttachmentTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'list_attachments',
    {
      title: 'List attachments',
      description:
        'List the attachments of a message (`message_id`), a thread (`thread_id`) or an inbox (`inbox_id`); give at least one, ' +
        'and several narrow the list. Metadata only (id, message_id, filename, content_type, size in bytes, created_at), ' +
        `newest first, at most ${LIST_LIMIT} (\`total\` says how many there are). Fetch a file with get_attachment_content.`,
      inputSchema: listAttachmentsInput,
      outputSchema: attachmentPageSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'list_attachments', signal: ctx.mcpReq.signal }, async () =>
        untrustedResult(await deps.api.listAttachments({ ...args, limit: LIST_LIMIT }, ctx.mcpReq), ['items[].filename']),
      ),
  );

  server.registerTool(
    'get_attachment_content',
    {
      title: 'Get attachment content',
      description:
        'Fetch an attachment\'s content by `attachment_id`. With `format: "base64"` (the default) the result is ' +
        '`{content, content_type, filename}` with the content base64-encoded, for passing on (e.g. to send_email_with_attachments). ' +
        'With `format: "binary"` the file comes as MCP content you can look at directly: an image block for images, an audio ' +
        'block for audio, otherwise an embedded resource with the bytes and their MIME type.',
      inputSchema: getAttachmentContentInput,
      outputSchema: attachmentContentSchema,
      annotations: readAnnotations,
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'get_attachment_content', signal: ctx.mcpReq.signal }, async () => {
        const attachment = await deps.api.getAttachment(args.attachment_id, ctx.mcpReq);
        // Through the signed download_url, which every storage backend provides.
        const bytes = await deps.api.download(attachment.download_url, ctx.mcpReq);
        const base64 = bytes.toString('base64');
        const description = {
          attachment_id: attachment.id,
          filename: attachment.filename,
          content_type: attachment.content_type,
          size: bytes.length,
          format: args.format,
        };
        return args.format === 'base64'
          ? untrustedResult({ ...description, content: base64 }, ['filename', 'content'])
          : untrustedResult(description, ['filename'], [binaryContent(attachment, base64)]);
      }),
  );
}
