/**
 * `Content-Disposition: attachment` for a file name in any script (RFC 6266): a plain-ASCII
 * `filename` for old clients and the exact name, UTF-8 percent-encoded, in `filename*`.
 */
export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  // encodeURIComponent leaves these unescaped, but RFC 5987's attr-char does not allow them.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
