/**
 * `Content-Disposition: attachment` for a file name in any script (RFC 6266): a plain-ASCII
 * `filename` for old clients and the exact name, UTF-8 percent-encoded, in `filename*`. Any name
 * gives a valid header: quotes, backslashes and control characters never reach it unencoded.
 */
export function attachmentDisposition(filename: string): string {
  // A lone surrogate has no UTF-8 form (encodeURIComponent would throw): it becomes U+FFFD.
  const name = filename.toWellFormed();
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  // encodeURIComponent leaves these unescaped, but RFC 5987's attr-char does not allow them.
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
