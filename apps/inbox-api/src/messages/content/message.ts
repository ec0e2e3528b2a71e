import type { Email } from 'postal-mime';
import { type FormFields, parseForm } from '../../webhooks/form.js';
import { type ParsedMail, parseHeaders, parseMail } from '../../webhooks/mime.js';
import { cleanContent } from './clean.js';
import { preview } from './preview.js';
import { renderMarkdown } from './render.js';

/** What every stored copy of a message's body carries besides the body: `content_clean` and the preview. */
export interface MessageContent {
  contentClean: string;
  preview: string;
}

export interface RenderedMessage extends MessageContent {
  html: string;
  text: string;
}

/** `content_clean` and the preview of a body: computed once per message, whatever the number of recipients. */
export function messageContent(body: { html: string; text: string }): MessageContent {
  const contentClean = cleanContent(body);
  return { contentClean, preview: preview(contentClean) };
}

/** An outgoing message written in Markdown: its HTML and text bodies, `content_clean` and preview. */
export function renderMessage(source: string): RenderedMessage {
  const { html, text } = renderMarkdown(source);
  return { html, text, ...messageContent({ html, text }) };
}

/**
 * Work for a content worker (or done inline): plain data, as it crosses threads. Received mail
 * is parsed here too (src/webhooks/mime.ts): raw MIME, or a header block alone; and a URL-encoded
 * webhook body (src/webhooks/form.ts).
 */
export type ContentTask =
  | { kind: 'render'; markdown: string }
  | { kind: 'clean'; body: { html: string; text: string } }
  | { kind: 'parse'; raw: Uint8Array }
  | { kind: 'headers'; block: string }
  | { kind: 'form'; body: Uint8Array };

export interface TaskResults {
  render: RenderedMessage;
  clean: MessageContent;
  parse: ParsedMail;
  headers: Email;
  form: FormFields;
}

export type TaskResult = TaskResults[ContentTask['kind']];

/** A task's result, and the buffers in it that go to the thread receiving it rather than being copied. */
export interface TaskOutcome {
  result: TaskResult;
  transfer: ArrayBuffer[];
}

export async function runTask(task: ContentTask): Promise<TaskOutcome> {
  switch (task.kind) {
    case 'render':
      return { result: renderMessage(task.markdown), transfer: [] };
    case 'clean':
      return { result: messageContent(task.body), transfer: [] };
    case 'parse': {
      const mail = await parseMail(task.raw);
      // The attachments' bytes, each in a buffer of its own (postal-mime's).
      return { result: mail, transfer: [...new Set(mail.attachments.map(({ content }) => content.buffer as ArrayBuffer))] };
    }
    case 'headers':
      return { result: await parseHeaders(task.block), transfer: [] };
    case 'form': {
      const fields = parseForm(task.body);
      // Each value's bytes in a buffer of its own (TextEncoder's): handed over, not copied.
      return { result: fields, transfer: fields.map(([, value]) => value.buffer as ArrayBuffer) };
    }
  }
}
