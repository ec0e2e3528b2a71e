import busboy from 'busboy';
import type { Request } from 'express';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '@repo/errors';

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

/** Reads the request body of a webhook; 413 beyond the limits, 400 when it is not what it says it is, 415 for other types. */
export async function readWebhookBody(req: Request, limits: BodyLimits): Promise<WebhookBody> {
  const declared = Number(req.get('content-length') ?? '0');
  if (declared > limits.totalBytes) throw tooLarge(limits.totalBytes);
  if (req.is('multipart/form-data')) return readMultipart(req, limits);
  if (req.is('application/x-www-form-urlencoded')) {
    // Percent-escapes are UTF-8 in every form a provider posts (Mailgun's).
    const text = (await readRaw(req, limits.totalBytes)).toString('utf8');
    const fields = new Map<string, Buffer>();
    for (const [name, value] of new URLSearchParams(text)) fields.set(name, Buffer.from(value, 'utf8'));
    return { fields, files: [] };
  }
  if (req.is('application/json') && req.body !== undefined) return fromJson(req.body);
  if (req.is('application/json') || req.is('text/plain')) {
    const text = (await readRaw(req, limits.totalBytes)).toString('utf8');
    try {
      return fromJson(JSON.parse(text) as unknown);
    } catch {
      throw new BadRequestError('The request body is not JSON');
    }
  }
  throw new UnsupportedMediaTypeError(
    `Expected multipart/form-data, application/x-www-form-urlencoded or JSON (got ${req.get('content-type') ?? 'no Content-Type'})`,
  );
}

/** The field as UTF-8 text (or in `charset`, when the provider says so), or undefined. */
export function fieldText(body: WebhookBody, name: string, charset = 'utf-8'): string | undefined {
  const value = body.fields.get(name);
  return value === undefined ? undefined : decodeText(value, charset);
}

/** Bytes in a named charset, as TextDecoder knows them (UTF-8 for unknown names); bad bytes become U+FFFD. */
export function decodeText(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset.trim().toLowerCase() || 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function fromJson(json: unknown): WebhookBody {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new BadRequestError('Expected a JSON object');
  const fields = new Map<string, Buffer>();
  for (const [name, value] of Object.entries(json)) {
    if (value === null || value === undefined) continue;
    fields.set(name, Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8'));
  }
  return { fields, files: [], json };
}

/**
 * Multipart through busboy. Field values are decoded as latin1, which maps every byte to one
 * character and back, so the bytes survive whatever charset they are in.
 */
function readMultipart(req: Request, limits: BodyLimits): Promise<WebhookBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defCharset: 'latin1',
        defParamCharset: 'utf8',
        limits: { fileSize: limits.totalBytes, files: limits.files, fieldSize: limits.totalBytes, fields: 1000, parts: 1100 },
      });
    } catch {
      reject(new BadRequestError('The multipart body has no boundary'));
      return;
    }
    const fields = new Map<string, Buffer>();
    const files: WebhookFile[] = [];
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
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(tooLarge(limits.totalBytes));
      count(value.length);
      fields.set(name, Buffer.from(value, 'latin1'));
    });
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        count(chunk.length);
        chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge(limits.totalBytes)));
      stream.on('end', () => {
        files.push({
          field,
          // Form encoders write a quote in a filename as %22 (WHATWG multipart/form-data encoding).
          filename: info.filename?.replaceAll('%22', '"') ?? field,
          contentType: info.mimeType || 'application/octet-stream',
          content: Buffer.concat(chunks),
        });
      });
    });
    parser.on('filesLimit', () => fail(new PayloadTooLargeError(`At most ${limits.files} files per request`)));
    parser.on('fieldsLimit', () => fail(new BadRequestError('Too many form fields')));
    parser.on('partsLimit', () => fail(new BadRequestError('Too many form parts')));
    parser.on('error', () => fail(new BadRequestError('The multipart body is malformed')));
    parser.on('close', () => {
      if (!failed) resolve({ fields, files });
    });
    req.on('error', (error) => fail(error));
    req.pipe(parser);
  });
}

/** The raw body, at most `limit` bytes (413 beyond). */
async function readRaw(req: Request, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The request body is larger than ${limit} bytes`, { limit_bytes: limit });
}
