import { isUtf8 } from 'node:buffer';
import { setImmediate } from 'node:timers/promises';
import { TextDecoder } from 'node:util';
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import type { Request } from 'express';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '@repo/errors';
import type { ContentPool } from '../messages/content/index.js';
import { parseForm } from './form.js';
import { bodyText } from './mime.js';

/**
 * A provider's webhook request, read whatever form it came in: multipart/form-data (files
 * included), application/x-www-form-urlencoded, JSON, or text (SNS posts its JSON as
 * text/plain). Field values are kept as bytes: SendGrid's parsed fields are in the charsets its
 * `charsets` field names, not always UTF-8.
 */
export interface WebhookBody {
  /** Form fields (the last of repeated names), or a JSON object's top-level fields as JSON text or strings. */
  fields: Map<string, Buffer>;
  files: WebhookFile[];
  /** A JSON body, parsed; undefined for forms. */
  json?: unknown;
}

export interface WebhookFile {
  /** The form field it came in, e.g. `attachment1` or `attachment-1`. */
  field: string;
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface BodyLimits {
  /** The whole request body, in bytes. */
  totalBytes: number;
  /** Files (attachments) at most. */
  files: number;
}

/**
 * Reads the request body of a webhook; 413 beyond the limits, 400 when it is not what it says it
 * is, 415 for other types. A URL-encoded body is decoded by `content` (a worker, past a few KB).
 */
export async function readWebhookBody(req: Request, limits: BodyLimits, content: ContentPool): Promise<WebhookBody> {
  if ((declaredLength(req) ?? 0) > limits.totalBytes) throw tooLarge(limits.totalBytes);
  if (req.is('multipart/form-data')) return readMultipart(req, limits);
  if (req.is('application/x-www-form-urlencoded')) {
    const raw = await readRaw(req, limits.totalBytes);
    // A worker that failed (stopped, out of time) leaves it to the event loop: the mail is kept all the same.
    const decoded = await content.parseForm(raw).catch(() => parseForm(raw));
    const fields = new Map<string, Buffer>();
    for (const [name, value] of decoded) fields.set(name, Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    return { fields, files: [] };
  }
  if (req.is('application/json') && req.body !== undefined) return fromJson(req.body);
  if (req.is('application/json') || req.is('text/plain')) {
    const text = (await readRaw(req, limits.totalBytes)).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new BadRequestError('The request body is not JSON');
    }
    return fromJson(json);
  }
  throw new UnsupportedMediaTypeError(
    `Expected multipart/form-data, application/x-www-form-urlencoded or JSON (got ${req.get('content-type') ?? 'no Content-Type'})`,
  );
}

/** The request body as it came, whatever its type (for signatures over the raw bytes); 413 beyond `limit` bytes. */
export async function readRawBody(req: Request, limit: number): Promise<Buffer> {
  if ((declaredLength(req) ?? 0) > limit) throw tooLarge(limit);
  return readRaw(req, limit);
}

/** The field as UTF-8 text (or in `charset`, when the provider says so), or undefined. */
export function fieldText(body: WebhookBody, name: string, charset = 'utf-8'): string | undefined {
  const value = body.fields.get(name);
  return value === undefined ? undefined : decodeText(value, charset);
}

/**
 * Bytes in a named charset, as TextDecoder knows them; bad bytes become U+FFFD. A name no decoder
 * knows is read as postal-mime (patched) reads it in raw mail: UTF-8 when the bytes are valid
 * UTF-8, else windows-1252.
 */
export function decodeText(bytes: Buffer, charset: string): string {
  return decoderFor(bytes, charset).decode(bytes);
}

/** The decoder decodeText reads these bytes with. */
function decoderFor(bytes: Buffer, charset: string): TextDecoder {
  return (
    decoderOf(charset.trim().toLowerCase() || 'utf-8') ??
    // ignoreBOM: a byte order mark stays, as Buffer's own UTF-8 decoding keeps it.
    new TextDecoder(isUtf8(bytes) ? 'utf-8' : 'windows-1252', { ignoreBOM: true })
  );
}

/** Bytes fieldBodyText decodes and cleans at a time: some milliseconds of work. */
const TURN_BYTES = 256 * 1024;

/**
 * A body field of the parsed modes (SendGrid's `text` and `html`, in the charset its `charsets`
 * names; Mailgun's `body-plain` and `body-html`), which no content worker parses, as stored
 * (bodyText); '' when there is none. Decoded and cleaned a slice at a time, the event loop taking
 * its turn between slices: in one piece, a 20 MB field's decoding alone held it for 40 to 120 ms,
 * its cleaning most of a second. The decoder keeps a character cut by a slice's end for the next
 * slice (`stream`); a CR (its LF may open the next slice) or a high surrogate at the end of a
 * slice's text waits for the next one likewise.
 */
export async function fieldBodyText(body: WebhookBody, name: string, charset = 'utf-8'): Promise<string> {
  const bytes = body.fields.get(name);
  if (bytes === undefined) return '';
  const decoder = decoderFor(bytes, charset);
  const parts: string[] = [];
  let carried = '';
  for (let start = 0; start < bytes.length; start += TURN_BYTES) {
    const last = start + TURN_BYTES >= bytes.length;
    const text = carried + decoder.decode(bytes.subarray(start, start + TURN_BYTES), { stream: !last });
    // The last character alone: a regular expression anchored at the end would try every position of the slice.
    const end = text.at(-1) ?? '';
    carried = !last && /^[\r\ud800-\udbff]$/.test(end) ? end : '';
    parts.push(bodyText(carried ? text.slice(0, -1) : text));
    if (!last) await setImmediate();
  }
  return parts.join('');
}

/** TextDecoder's decoder for a label, or undefined for a label it does not know. */
function decoderOf(label: string) {
  try {
    return new TextDecoder(label);
  } catch {
    return undefined;
  }
}

function fromJson(json: unknown): WebhookBody {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new BadRequestError('Expected a JSON object');
  const fields = new Map<string, Buffer>();
  for (const [name, value] of Object.entries(json)) {
    if (value === null || value === undefined) continue;
    fields.set(name, Buffer.from(typeof value === 'string' ? value : stringified(value), 'utf8'));
  }
  return { fields, files: [], json };
}

/** A field's JSON text; 400 for one nested deeper than JSON.stringify's recursion goes (it parsed, iteratively). */
function stringified(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) throw new BadRequestError('The JSON body is nested too deeply');
    throw error;
  }
}

/** Form fields in a multipart body at most; the files are BodyLimits' `files`. */
const MAX_FIELDS = 1000;
/** Parts this large are kept in shared memory (PartBytes). */
const SHARE_FROM_BYTES = 64 * 1024;

/**
 * `size` bytes in memory that threads share: a raw mail there reaches the content worker that
 * parses it without a copy (pool.ts posts it; a copy of 30 MB held the event loop for tens of
 * milliseconds or more), and stays readable here should the parse fail (parse.ts keeps it then).
 */
export function sharedBytes(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
}

/**
 * The bytes of one part, as they arrive. A small part is joined at its end; from
 * SHARE_FROM_BYTES on, each chunk is copied as it comes into a growable SharedArrayBuffer (see
 * sharedBytes), so that a large part (a raw mail in SendGrid's `email` or Mailgun's `body-mime`, a
 * URL-encoded body: readRaw) is never copied in one piece on the event loop.
 */
class PartBytes {
  private chunks: Buffer[] = [];
  private shared: SharedArrayBuffer | undefined;
  private size = 0;

  /** `maxBytes`: the most the part can have (the request's size). */
  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    const size = this.size + chunk.length;
    if (!this.shared && size >= SHARE_FROM_BYTES) {
      this.shared = new SharedArrayBuffer(0, { maxByteLength: Math.max(this.maxBytes, size) });
      this.chunks.push(chunk);
      this.size = 0;
      for (const earlier of this.chunks.splice(0)) this.push(earlier);
      return;
    }
    if (!this.shared) {
      this.chunks.push(chunk);
    } else {
      const shared = this.shared;
      if (size > shared.byteLength) shared.grow(Math.min(shared.maxByteLength, Math.max(size, 2 * shared.byteLength)));
      chunk.copy(new Uint8Array(shared, this.size, chunk.length));
    }
    this.size = size;
  }

  bytes(): Buffer {
    return this.shared ? Buffer.from(this.shared, 0, this.size) : Buffer.concat(this.chunks, this.size);
  }
}

/**
 * Multipart through @fastify/busboy, every part read as a stream of bytes and joined once: a field
 * keeps its bytes whatever charset they are in, and a large one (a raw mail in SendGrid's `email`,
 * Mailgun's `body-mime`) is never turned into a string and back on the event loop, which took
 * seconds for 30 MB. A part with a filename, or of type application/octet-stream, is a file (as
 * browsers and busboy take it); the others are fields.
 */
function readMultipart(req: Request, limits: BodyLimits): Promise<WebhookBody> {
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance;
    try {
      parser = new Busboy({
        headers: req.headers as BusboyHeaders,
        isPartAFile: () => true,
        limits: { fileSize: limits.totalBytes, parts: MAX_FIELDS + limits.files },
      });
    } catch {
      reject(new BadRequestError('The multipart body has no boundary'));
      return;
    }
    const fields = new Map<string, Buffer>();
    const files: WebhookFile[] = [];
    let fieldCount = 0;
    let fileCount = 0;
    let received = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      req.resume();
      reject(error);
    };
    const count = (bytes: number) => {
      received += bytes;
      if (received > limits.totalBytes) fail(tooLarge(limits.totalBytes));
    };
    parser.on('file', (name, stream, filename: string | undefined, _encoding, mimeType) => {
      const isFile = filename !== undefined || mimeType === 'application/octet-stream';
      if (isFile ? ++fileCount > limits.files : ++fieldCount > MAX_FIELDS) {
        stream.resume();
        fail(
          isFile
            ? new PayloadTooLargeError(`At most ${limits.files} files per request`)
            : new BadRequestError('Too many form fields'),
        );
        return;
      }
      const bytes = new PartBytes(Math.min(limits.totalBytes, declaredLength(req) ?? limits.totalBytes));
      stream.on('data', (chunk: Buffer) => {
        count(chunk.length);
        if (!failed) bytes.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge(limits.totalBytes)));
      stream.on('error', () => fail(malformed()));
      stream.on('end', () => {
        const content = bytes.bytes();
        if (!isFile) {
          fields.set(name, content);
          return;
        }
        files.push({
          field: name,
          // Form encoders write a quote in a filename as %22 (WHATWG multipart/form-data encoding).
          filename: filename?.replaceAll('%22', '"') ?? name,
          contentType: mimeType || 'application/octet-stream',
          content,
        });
      });
    });
    parser.on('partsLimit', () => fail(new BadRequestError('Too many form parts')));
    parser.on('error', () => fail(malformed()));
    parser.on('finish', () => {
      if (!failed) resolve({ fields, files });
    });
    req.on('error', (error) => fail(error));
    req.pipe(parser);
  });
}

/**
 * The raw body, at most `limit` bytes (413 beyond), gathered as PartBytes gathers a part: a large
 * one in shared memory, never joined in one copy, and handed to the content worker that decodes a
 * URL-encoded body without another (a 20 MB body's join and copy held the event loop for tens of
 * milliseconds each).
 */
async function readRaw(req: Request, limit: number): Promise<Buffer> {
  const bytes = new PartBytes(limit);
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    bytes.push(chunk);
  }
  return bytes.bytes();
}

/** The request's Content-Length, when it has one. */
function declaredLength(req: Request): number | undefined {
  const declared = Number(req.get('content-length') ?? Number.NaN);
  return Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
}

function malformed(): BadRequestError {
  return new BadRequestError('The multipart body is malformed');
}

function tooLarge(limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The request body is larger than ${limit} bytes`, { limit_bytes: limit });
}
