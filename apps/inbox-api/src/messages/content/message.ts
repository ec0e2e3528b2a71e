import { cleanContent } from './clean.js';
import { preview } from './preview.js';
import { renderMarkdown } from './render.js';

/** What every stored copy of a message's body carries besides the body: `content_clean` and the preview. */
export interface MessageContent {
  contentClean: string;
  preview: string;
}

/** `content_clean` and the preview of a body: computed once per message, whatever the number of recipients. */
export function messageContent(body: { html: string; text: string }): MessageContent {
  const contentClean = cleanContent(body);
  return { contentClean, preview: preview(contentClean) };
}

/** An outgoing message written in Markdown: its HTML and text bodies, `content_clean` and preview. */
export function renderMessage(source: string): { html: string; text: string } & MessageContent {
  const { html, text } = renderMarkdown(source);
  return { html, text, ...messageContent({ html, text }) };
}

/** Work for a content worker (or done inline): plain data, as it crosses threads. */
export type ContentTask = { kind: 'render'; markdown: string } | { kind: 'clean'; body: { html: string; text: string } };

export function runTask(task: ContentTask): MessageContent {
  return task.kind === 'render' ? renderMessage(task.markdown) : messageContent(task.body);
}
