/** At most `max` UTF-16 units of `text`, a character outside the BMP (an emoji) never cut in two. */
export function prefixOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * JSON text for a jsonb parameter: a lone surrogate in a string (half an emoji) becomes U+FFFD,
 * since JSON.stringify writes it as an escape (`"\ud83d"`) that Postgres refuses, failing the
 * whole statement and the change it belongs to.
 */
export function jsonbText(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'string' && !item.isWellFormed() ? item.toWellFormed() : item,
  );
}
