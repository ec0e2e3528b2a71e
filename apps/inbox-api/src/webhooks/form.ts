/**
 * A URL-encoded webhook body (Mailgun posts its parsed fields so): its fields, percent-escapes as
 * UTF-8 as every provider writes them, each value as its UTF-8 bytes in a buffer of its own, which
 * a content worker hands over rather than copies. Decoding is on the content workers for a body
 * past a few KB (pool.ts): URLSearchParams took 1.4 s of the event loop on a 20 MB field. Pure.
 */
export type FormFields = [name: string, value: Uint8Array][];

export function parseForm(body: Uint8Array): FormFields {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const encoder = new TextEncoder();
  return [...new URLSearchParams(text)].map(([name, value]) => [name, encoder.encode(value)]);
}
