/**
 * Files coming in: a multipart upload streamed by multer into object storage (never held in
 * memory), and the signed upload links this service serves itself for local storage (an HMAC
 * over the path and expiry, like the download links of signed-url.ts).
 */
import type { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import multer from 'multer';
import { AppError, BadRequestError, ForbiddenError, PayloadTooLargeError, ValidationError } from '@repo/errors';
import { signUrlPath, verifyUrlToken } from '@repo/storage';

/** A file received in a multipart request and stored in object storage. */
export interface StoredUpload {
  key: string;
  originalName: string;
  size: number;
}

/** The content type an upload link expects, signed into Cloud Storage's links too. */
export const UPLOAD_CONTENT_TYPE = 'application/octet-stream';

// Multipart overhead beyond the file (boundaries, part headers, the other fields).
const MULTIPART_SLACK_BYTES = 64 * 1024;

/**
 * The fields of a multipart request, and its file (form field `file`) streamed by `store` into
 * object storage as it arrives, never held in memory; a file larger than `maxBytes` answers 413
 * and leaves nothing stored. Undefined for a request of another content type.
 */
export async function receiveMultipart(
  req: Request,
  res: Response,
  options: {
    maxBytes: number;
    store: (originalName: string, body: Readable) => Promise<StoredUpload>;
    /** Removes what `store` stored, when the rest of the request turns out bad. */
    remove: (file: StoredUpload) => Promise<void>;
  },
): Promise<{ fields: Record<string, unknown>; file?: StoredUpload } | undefined> {
  if (!req.is('multipart/form-data')) return undefined;
  // Refused before a byte is read when the request says it is too large.
  if (Number(req.get('content-length') ?? 0) > options.maxBytes + MULTIPART_SLACK_BYTES) throw tooLarge(options.maxBytes);
  let stored: StoredUpload | undefined;
  const engine: multer.StorageEngine = {
    _handleFile(_req, file, callback) {
      options.store(file.originalname, file.stream).then((upload) => {
        stored = upload;
        callback(null, { size: upload.size });
      }, callback);
    },
    _removeFile(_req, _file, callback) {
      callback(null);
    },
  };
  const upload = multer({ storage: engine, limits: { files: 1, fields: 20, fieldSize: 1024, parts: 21 } }).single('file');
  try {
    await new Promise<void>((resolve, reject) => {
      upload(req, res, (error: unknown) => (error ? reject(multipartError(error, options.maxBytes)) : resolve()));
    });
  } catch (error) {
    if (stored) await options.remove(stored);
    throw error;
  }
  return { fields: { ...(req.body as Record<string, unknown>) }, ...(stored ? { file: stored } : {}) };
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    `The file is larger than ${maxBytes} bytes: create the job without a file and upload it to its upload_url`,
    { max_bytes: maxBytes },
  );
}

function multipartError(error: unknown, maxBytes: number): Error {
  // From the store: too large (its byte count) or the storage's own failure.
  if (error instanceof PayloadTooLargeError) return tooLarge(maxBytes);
  if (error instanceof AppError) return error;
  if (!(error instanceof multer.MulterError)) return new BadRequestError('The multipart body could not be read');
  switch (error.code) {
    case 'LIMIT_UNEXPECTED_FILE':
      return new ValidationError([
        { loc: ['body', error.field ?? 'file'], msg: 'Send one file, in the form field `file`', type: 'unexpected_file' },
      ]);
    default:
      return new BadRequestError(`The multipart body was refused: ${error.message}`);
  }
}

/** The path of a load job's upload link: what its token signs. */
export function uploadPath(jobId: string): string {
  return `/load_job/${jobId}/file`;
}

/** `<base>/load_job/<id>/file?expires=<epoch seconds>&token=<HMAC of path and expiry>` */
export function signedUploadUrl(
  jobId: string,
  links: { baseUrl: string; secret: string; ttlSeconds: number },
  nowMs = Date.now(),
): { url: string; expiresAt: Date } {
  const expires = Math.floor(nowMs / 1000) + links.ttlSeconds;
  const query = new URLSearchParams({ expires: String(expires), token: signUrlPath(uploadPath(jobId), expires, links.secret) });
  return { url: `${links.baseUrl}${uploadPath(jobId)}?${query.toString()}`, expiresAt: new Date(expires * 1000) };
}

/** 403 unless `query` is a valid, unexpired upload link of the job. */
export function checkUploadLink(jobId: string, query: { expires: string; token: string }, secret: string): void {
  const check = verifyUrlToken(uploadPath(jobId), query.expires, query.token, secret);
  if (check === 'expired') throw new ForbiddenError('This upload link has expired: create a new load job');
  if (check === 'invalid') throw new ForbiddenError('This upload link is not valid for this job');
}
