import { createHash, type KeyObject, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The part of the Cloud Storage JSON API that `@google-cloud/storage` calls for our adapter
 * (multipart upload, metadata, media download of the live generation, delete, list by prefix), on
 * 127.0.0.1. Every request
 * must carry the service account's self-signed JWT, verified with its public key; requests
 * are recorded so that tests can check method, path and query.
 */
export interface FakeGcs {
  url: string;
  objects: Map<string, { data: Buffer; contentType: string }>;
  requests: { method: string; path: string; query: Record<string, string> }[];
  /** Answers the next request with this status and a Google-style error body. */
  failNext(status: number, message: string): void;
  /** Sends the first `bytes` of the next media download, then cuts the connection: a download failing midway. */
  cutNextDownload(bytes: number): void;
  close(): Promise<void>;
}

const PAGE_SIZE = 2; // small, so that listing a folder needs the pageToken round trips

export async function startFakeGcs(options: { bucket: string; clientEmail: string; publicKey: KeyObject }): Promise<FakeGcs> {
  const objects = new Map<string, { data: Buffer; contentType: string }>();
  const requests: FakeGcs['requests'] = [];
  // Each upload makes a new generation of its object, as in a bucket without object versioning.
  const generations = new Map<string, number>();
  let lastGeneration = 0;
  let failure: { status: number; message: string } | undefined;
  let cutAfter: number | undefined;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams) });
      const reply = (status: number, body?: unknown) => {
        res.statusCode = status;
        if (body === undefined) return res.end();
        res.setHeader('content-type', 'application/json; charset=UTF-8');
        res.end(JSON.stringify(body));
      };
      const error = (status: number, message: string) =>
        reply(status, { error: { code: status, message, errors: [{ message }] } });

      const authProblem = checkBearerJwt(req.headers.authorization, options);
      if (authProblem) return error(401, authProblem);
      if (failure) {
        const { status, message } = failure;
        failure = undefined;
        return error(status, message);
      }

      const bucketPath = `/storage/v1/b/${options.bucket}/o`;
      if (
        req.method === 'POST' &&
        url.pathname === `/upload${bucketPath}` &&
        url.searchParams.get('uploadType') === 'multipart'
      ) {
        const name = url.searchParams.get('name') ?? '';
        const [metadata, media] = parseMultipartRelated(req.headers['content-type'] ?? '', Buffer.concat(chunks));
        const { contentType } = JSON.parse(metadata!.body.toString()) as { contentType: string };
        if (media!.headers['content-type'] !== contentType) return error(400, 'Content-Type of the media part differs');
        objects.set(name, { data: media!.body, contentType });
        generations.set(name, ++lastGeneration);
        return reply(200, resource(name, objects.get(name)!));
      }
      if (req.method === 'GET' && url.pathname === bucketPath) {
        const prefix = url.searchParams.get('prefix') ?? '';
        const names = [...objects.keys()].filter((name) => name.startsWith(prefix)).sort();
        const start = Number(url.searchParams.get('pageToken') ?? 0);
        const page = names.slice(start, start + PAGE_SIZE);
        const next = start + PAGE_SIZE < names.length ? String(start + PAGE_SIZE) : undefined;
        return reply(200, {
          kind: 'storage#objects',
          items: page.map((name) => resource(name, objects.get(name)!)),
          nextPageToken: next,
        });
      }
      if (url.pathname.startsWith(`${bucketPath}/`)) {
        const name = decodeURIComponent(url.pathname.slice(bucketPath.length + 1));
        const object = objects.get(name);
        const generation = url.searchParams.get('generation');
        if (!object || (generation !== null && generation !== String(generationOf(name)))) {
          return error(404, `No such object: ${options.bucket}/${name}`);
        }
        if (req.method === 'GET' && url.searchParams.get('alt') === 'media') {
          res.setHeader('content-type', object.contentType);
          res.setHeader('x-goog-hash', `md5=${md5(object.data)}`);
          if (cutAfter === undefined) return res.end(object.data);
          // Chunked, as Cloud Storage may answer: the library notices a chunked body cut short
          // (through node-fetch 2), but not one cut short of its Content-Length, whose stream then
          // neither ends nor fails.
          res.write(object.data.subarray(0, cutAfter), () => res.destroy());
          cutAfter = undefined;
          return;
        }
        if (req.method === 'GET' && !url.searchParams.has('alt')) return reply(200, resource(name, object));
        if (req.method === 'DELETE') {
          objects.delete(name);
          return reply(204);
        }
      }
      error(400, `Unexpected request ${req.method} ${url.pathname}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objects,
    requests,
    failNext(status, message) {
      failure = { status, message };
    },
    cutNextDownload(bytes) {
      cutAfter = bytes;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  // Objects a test put into `objects` directly are at their first generation.
  function generationOf(name: string): number {
    return generations.get(name) ?? 1;
  }

  function resource(name: string, object: { data: Buffer; contentType: string }) {
    const size = String(object.data.length);
    return {
      kind: 'storage#object',
      bucket: options.bucket,
      name,
      generation: String(generationOf(name)),
      size,
      contentType: object.contentType,
      md5Hash: md5(object.data),
    };
  }
}

/** A self-signed service-account JWT: RS256 over header.payload, issued by the account, with a Storage scope. */
function checkBearerJwt(header: string | undefined, options: { clientEmail: string; publicKey: KeyObject }): string | undefined {
  const match = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(header ?? '');
  if (!match) return 'Authorization is not a bearer JWT';
  const [, head, body, signature] = match as unknown as [string, string, string, string];
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;
  if (decode(head).alg !== 'RS256') return 'JWT is not RS256';
  if (!verify('RSA-SHA256', Buffer.from(`${head}.${body}`), options.publicKey, Buffer.from(signature, 'base64url'))) {
    return 'JWT signature does not verify';
  }
  const claims = decode(body);
  const now = Date.now() / 1000;
  if (claims.iss !== options.clientEmail || claims.sub !== options.clientEmail) return 'JWT is not from the service account';
  if (!String(claims.scope).split(' ').includes('https://www.googleapis.com/auth/devstorage.read_write'))
    return 'JWT lacks the scope';
  if (typeof claims.exp !== 'number' || claims.exp < now || typeof claims.iat !== 'number' || claims.iat > now + 60) {
    return 'JWT is not valid now';
  }
  return undefined;
}

function parseMultipartRelated(contentType: string, body: Buffer): { headers: Record<string, string>; body: Buffer }[] {
  const boundary = /^multipart\/related; boundary=(.+)$/.exec(contentType)?.[1];
  if (!boundary) throw new Error(`not multipart/related: ${contentType}`);
  const parts: { headers: Record<string, string>; body: Buffer }[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delimiter) + delimiter.length;
  for (;;) {
    if (body.subarray(start, start + 2).toString() === '--') return parts;
    const next = body.indexOf(delimiter, start);
    const part = body.subarray(start + 2, next - 2); // between the CRLF after a delimiter and the CRLF before the next
    const split = part.indexOf('\r\n\r\n');
    const headers = Object.fromEntries(
      part
        .subarray(0, split)
        .toString()
        .split('\r\n')
        .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    parts.push({ headers, body: part.subarray(split + 4) });
    start = next + delimiter.length;
  }
}

function md5(data: Buffer): string {
  return createHash('md5').update(data).digest('base64');
}
