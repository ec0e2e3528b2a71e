import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { ForbiddenError, requestIdOf, UpstreamError } from '@repo/errors';
import type { Logger } from '@repo/http';
import { attachmentDisposition, hashInTurns, type OpenedObject, signUrlPath, verifyUrlToken } from '@repo/storage';

/** Where download links of attachments held by the app itself (local and database storage) lead. */
export interface DownloadLinks {
  /** Absolute base of the links, as clients reach the service (PUBLIC_BASE_URL); unset, the address of this process. */
  baseUrl: string | undefined;
  /** Key of the HMAC that signs them. */
  secret: string;
  ttlSeconds: number;
}

/** The content route's path for one attachment: the path a link's token signs. */
function contentPath(attachmentId: string): string {
  return `/v1/attachments/${encodeURIComponent(attachmentId)}/content`;
}

/** `<base>/v1/attachments/<id>/content?token=<HMAC of path and expiry>&expires=<epoch seconds>` */
export function signedDownloadUrl(attachmentId: string, links: DownloadLinks & { baseUrl: string }, nowMs = Date.now()): string {
  const path = contentPath(attachmentId);
  const expires = Math.floor(nowMs / 1000) + links.ttlSeconds;
  const query = new URLSearchParams({ token: signUrlPath(path, expires, links.secret), expires: String(expires) });
  return `${links.baseUrl}${path}?${query.toString()}`;
}

/**
 * Passes when `token` and `expires` are a download link of this attachment that has not expired;
 * 403 `forbidden` otherwise, saying whether the link is missing, expired or wrong (the check
 * itself is in constant time, see signed-url.ts).
 */
export function checkDownloadToken(
  attachmentId: string,
  link: { token?: string; expires?: string },
  secret: string,
  nowMs = Date.now(),
): void {
  if (link.token === undefined || link.expires === undefined) {
    throw new ForbiddenError('This download needs the token and expires of the attachment’s download_url');
  }
  const check = verifyUrlToken(contentPath(attachmentId), link.expires, link.token, secret, nowMs / 1000);
  if (check === 'expired') {
    throw new ForbiddenError('This download link has expired: get a fresh download_url from GET /v1/attachments/{attachment_id}');
  }
  if (check === 'invalid') throw new ForbiddenError('This download link is not valid for this attachment');
}

const CONTENT_ROUTE = /^\/v1\/attachments\/[^/]+\/content$/;

/**
 * A request to the content route that carries a link's token: the link is its credential (it can
 * be handed to a browser or a model), so the API key check lets it through and the route checks
 * the signature instead.
 */
export function carriesDownloadToken(req: Request): boolean {
  return (
    (req.method === 'GET' || req.method === 'HEAD') &&
    req.query.token !== undefined &&
    CONTENT_ROUTE.test(`${req.baseUrl}${req.path}`)
  );
}

// type/subtype (and parameters) in printable ASCII. Inbound mail may say anything in its
// Content-Type; what is not a plain MIME type goes out as bytes of no particular type.
const SERVABLE_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(?:[ \t]*;[\x20-\x7e]*)?$/i;

export function servableContentType(stored: string): string {
  return SERVABLE_TYPE.test(stored) ? stored : 'application/octet-stream';
}

interface DownloadedFile {
  filename: string;
  contentType: string;
  contentHash: string;
}

/** Headers of a binary download of `size` bytes. */
export function downloadHeaders(file: DownloadedFile, size: number) {
  return {
    'Content-Type': servableContentType(file.contentType),
    'Content-Length': String(size),
    // Always a download, whatever the disposition in the mail: nothing a sender wrote is shown as
    // a page of this origin.
    'Content-Disposition': attachmentDisposition(file.filename),
    // And should a browser render it anyway (HTML, SVG), it is not sniffed into another type, runs
    // no script and loads nothing.
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "sandbox; default-src 'none'",
    ETag: `"${file.contentHash}"`,
    // Shared caches keep no copy of what an API key or a link opened.
    'Cache-Control': 'private',
  };
}

/**
 * The JSON of a base64 download around its content, `{"content":"` + base64 + `","content_type":
 * ...,"filename":...}`, and its length in bytes for `size` bytes of content: what lets it be sent
 * as the content is read, with a Content-Length, instead of built in memory.
 */
export function base64Json(file: DownloadedFile, size: number) {
  const head = '{"content":"';
  const tail = `","content_type":${JSON.stringify(file.contentType)},"filename":${JSON.stringify(file.filename)}}`;
  return { head, tail, length: Buffer.byteLength(head) + Math.ceil(size / 3) * 4 + Buffer.byteLength(tail) };
}

/** Headers of a base64 download of `size` bytes of content. */
export function base64Headers(file: DownloadedFile, size: number) {
  return {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(base64Json(file, size).length),
    'X-Content-Type-Options': 'nosniff',
    // Another representation than the bytes', so another tag.
    ETag: `"${file.contentHash}.base64"`,
    'Cache-Control': 'private',
  };
}

// Base64 turns every 3 bytes into 4 characters: pieces of a multiple of 3 bytes encode on their
// own, and join into the encoding of the whole. 48 KiB a piece keeps each step short however
// large the chunks the storage yields (the database backend's is the whole object).
const PIECE_BYTES = 3 * 16 * 1024;

/**
 * The JSON of a base64 download, piece by piece as `content` is read: nothing holds more than a
 * piece and the 0 to 2 bytes carried to the next one. The head goes out with the first piece, so
 * a read that fails at once leaves the response unsent, to be answered as an error. Content that
 * ends short of (or runs past) the `size` the JSON's length was computed for fails instead of
 * ending the JSON.
 */
export async function* base64JsonPieces(
  content: AsyncIterable<Buffer>,
  json: { head: string; tail: string },
  size: number,
): AsyncGenerator<string> {
  let head = json.head;
  let carried: Buffer = Buffer.alloc(0);
  let read = 0;
  for await (const chunk of content) {
    read += chunk.length;
    if (read > size) break;
    const bytes = carried.length > 0 ? Buffer.concat([carried, chunk]) : chunk;
    const whole = bytes.length - (bytes.length % 3);
    for (let start = 0; start < whole; start += PIECE_BYTES) {
      yield head + bytes.toString('base64', start, Math.min(start + PIECE_BYTES, whole));
      head = '';
    }
    carried = bytes.subarray(whole);
  }
  if (read !== size) throw new Error(`The stored content has ${read > size ? 'more' : 'fewer'} bytes than the ${size} recorded`);
  yield head + carried.toString('base64') + json.tail;
}

/**
 * The content as it is read, failing where it is not what was recorded with it: shorter or longer
 * than `size`, or of another SHA-256 than `contentHash` (`sha256:<hex>`). Each chunk goes on when
 * the next one comes; the last only once the whole was checked, so that content changed behind the
 * service's back never arrives whole.
 */
export async function* asRecorded(
  content: AsyncIterable<Buffer>,
  recorded: { id: string; size: number; contentHash: string },
): AsyncGenerator<Buffer> {
  const changed = (how: string) =>
    new UpstreamError(`The stored content of this attachment is not the one recorded (${how}): it is not sent`, {
      details: { attachment_id: recorded.id },
    });
  const hash = createHash('sha256');
  let read = 0;
  let held: Buffer | undefined;
  for await (const chunk of content) {
    read += chunk.length;
    if (read > recorded.size) break;
    await hashInTurns(hash, chunk);
    if (held) yield held;
    held = chunk;
  }
  if (read !== recorded.size)
    throw changed(`${read > recorded.size ? 'more' : 'fewer'} bytes than the ${recorded.size} recorded`);
  if (`sha256:${hash.digest('hex')}` !== recorded.contentHash) throw changed('another SHA-256');
  if (held) yield held;
}

/** `pieces` with their first already read (its failure thrown here), then the rest as they come. */
async function started<T>(pieces: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await pieces.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* pieces;
  })();
}

/**
 * Sends the content as it is read, never the whole file in memory: the bytes themselves, or
 * (`base64`) the JSON `{content, content_type, filename}` with the content base64-encoded on the
 * way (304 to an If-None-Match that names the ETag; headers alone to HEAD), its length the size
 * recorded with it. Should reading fail once bytes are out, or the stored content turn out other
 * than recorded (asRecorded), the connection is cut (short of its Content-Length, so that no client
 * takes it for the whole) and the failure logged; a client that goes away just ends it.
 */
export async function sendDownload(
  req: Request,
  res: Response,
  // `size`: the one recorded with the content, which the response promises whatever the storage now holds.
  download: { format: 'binary' | 'base64'; file: DownloadedFile & { id: string; size: number }; opened: OpenedObject },
  logger: Logger,
): Promise<void> {
  const { file, opened } = download;
  const headers = download.format === 'base64' ? base64Headers(file, file.size) : downloadHeaders(file, file.size);
  // setHeader, not Express's set, which would add a charset the bytes may not be in.
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const notModified = req.fresh;
  if (notModified) res.status(304);
  if (notModified || req.method === 'HEAD') {
    opened.stream.destroy();
    res.end();
    return;
  }
  // A failed read, told apart from the client going away (which ends the response the same way).
  let readFailure: unknown;
  opened.stream.once('error', (error) => (readFailure = error));
  try {
    const content = asRecorded(opened.stream, file);
    const pieces: AsyncGenerator<string | Buffer> =
      download.format === 'base64' ? base64JsonPieces(content, base64Json(file, file.size), file.size) : content;
    // The first piece before the response is piped: a failure that comes before any byte is answered as an
    // error (pipeline would destroy the response, and with it the connection).
    await pipeline(await started(pieces), res);
  } catch (error) {
    if (!res.headersSent) {
      // Nothing went out: the error handler answers, without this download's headers.
      for (const name of Object.keys(headers)) res.removeHeader(name);
      opened.stream.destroy();
      throw error;
    }
    // pipeline has destroyed the response, and with it the connection.
    if (readFailure !== undefined || (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
      logger.error(
        { err: readFailure ?? error, requestId: requestIdOf(res) },
        'download cut short: reading the stored content failed',
      );
    }
  }
}
