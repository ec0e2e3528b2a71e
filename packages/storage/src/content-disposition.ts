/**
 * `Content-Disposition: attachment` for a file name in any script (RFC 6266): the exact name,
 * UTF-8 percent-encoded, in `filename*` (which every current browser and HTTP client prefers),
 * and a plain-ASCII `filename` for old clients. Any name gives a valid header: quotes,
 * backslashes and control characters never reach it unencoded.
 */
export function attachmentDisposition(filename: string): string {
  // A lone surrogate has no UTF-8 form (encodeURIComponent would throw): it becomes U+FFFD.
  const name = filename.toWellFormed();
  // encodeURIComponent leaves these unescaped, but RFC 5987's attr-char does not allow them.
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${plainFilename(name)}"; filename*=UTF-8''${encoded}`;
}

// Outside printable ASCII; what ends or escapes the quoted string (`"`, `\`); `%`, which some
// clients percent-decode; path separators (`/`, `\`, and `:` for drives and Windows' data
// streams); and the other characters Windows refuses in a name.
const UNSAFE_IN_PLAIN_NAME = /[^\x20-\x7e]|["\\%/:*?<>|]/g;

/**
 * The name for clients that read only `filename`: nothing in it can name another folder or
 * break the header, so a client that writes it as it stands writes one file where it meant to.
 * `../../etc/passwd` becomes `.._.._etc_passwd`; a name of dots alone (`..`) becomes underscores.
 */
export function plainFilename(name: string): string {
  const plain = name.replace(UNSAFE_IN_PLAIN_NAME, '_');
  return /^\.*$/.test(plain) ? '_'.repeat(Math.max(plain.length, 1)) : plain;
}
