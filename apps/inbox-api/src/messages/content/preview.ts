import { prefixOf } from '../../shared/text.js';
import { markdown, plainText } from './render.js';

const PREVIEW_LENGTH = 120;
// The preview needs the start only; this bounds the work for huge bodies.
const PREVIEW_SOURCE_LENGTH = 10_000;

/** The first ~120 characters of `content_clean` as plain words, cut at a word with an ellipsis. */
export function preview(cleanText: string): string {
  const tokens = markdown.parse(cleanText.slice(0, PREVIEW_SOURCE_LENGTH), {});
  const words = plainText(tokens, { linkUrls: false, blockMarkers: false }).replace(/\s+/g, ' ').trim();
  if (words.length <= PREVIEW_LENGTH) return words;
  const lastSpace = words.lastIndexOf(' ', PREVIEW_LENGTH);
  const cut = lastSpace > 0 ? words.slice(0, lastSpace) : prefixOf(words, PREVIEW_LENGTH);
  return `${cut.replace(/[\s,;:.\-–—]+$/, '')}…`;
}
