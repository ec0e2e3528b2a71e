/*
 * What a message's body becomes: the HTML and plain text of an outgoing Markdown message,
 * `content_clean` (the new content of any message as Markdown, without quoted replies,
 * signatures and invisible parts) and the short preview. Every step is linear in the size of
 * the body and free of recursion; the pool runs them off the event loop.
 */
export { cleanContent } from './clean.js';
export { FALLBACK_CONTENT_CHARS, fallbackContent } from './fallback.js';
export { type MessageContent, messageContent, type RenderedMessage } from './message.js';
export { type ContentPool, type ContentPoolOptions, ContentTooComplexError, createContentPool } from './pool.js';
export { preview } from './preview.js';
export { renderMarkdown } from './render.js';
