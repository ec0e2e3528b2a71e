import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { ForbiddenError, requestIdOf } from '@repo/errors';
import type { Logger } from '@repo/http';
import { attachmentDisposition, type OpenedObject, signUrlPath, verifyUrlToken } from '@repo/storage';

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

/** Headers of a binary download of `size` bytes. */
export function downloadHeaders(file: { filename: string; contentType: string; contentHash: string }, size: number) {
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
 * Sends the bytes as they are read, never the whole file in memory (304 to an If-None-Match that
 * names the ETag). Should reading fail once bytes are out, the response is cut short (its
 * Content-Length shows the client) and the failure logged; a client that goes away just ends it.
 */
export async function sendDownload(
  req: Request,
  res: Response,
  download: { file: { filename: string; contentType: string; contentHash: string }; opened: OpenedObject },
  logger: Logger,
): Promise<void> {
  const headers = downloadHeaders(download.file, download.opened.size);
  // setHeader, not Express's set, which would add a charset the bytes may not be in.
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const notModified = req.fresh;
  if (notModified) res.status(304);
  if (notModified || req.method === 'HEAD') {
    download.opened.stream.destroy();
    res.end();
    return;
  }
  try {
    await pipeline(download.opened.stream, res);
  } catch (error) {
    if (!res.headersSent) {
      // Nothing went out: the error handler answers, without this download's headers.
      for (const name of Object.keys(headers)) res.removeHeader(name);
      throw error;
    }
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
      logger.error({ err: error, requestId: requestIdOf(res) }, 'download cut short: reading the stored content failed');
    }
  }
}
