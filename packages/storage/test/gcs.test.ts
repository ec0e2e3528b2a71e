import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { NotFoundError, UpstreamError } from '@repo/errors';
import { GcsObjectStorage } from '../src/index.js';
import { type FakeGcs, startFakeGcs } from './fake-gcs.js';

const BUCKET = 'inbox-attachments';
const CLIENT_EMAIL = 'inbox-api@example-project.iam.gserviceaccount.com';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const credentials = { client_email: CLIENT_EMAIL, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };

let gcs: FakeGcs;
let storage: GcsObjectStorage;

beforeAll(async () => {
  gcs = await startFakeGcs({ bucket: BUCKET, clientEmail: CLIENT_EMAIL, publicKey });
  storage = new GcsObjectStorage({ bucket: BUCKET, apiEndpoint: gcs.url, credentials });
});
afterAll(() => gcs.close());
beforeEach(() => {
  gcs.objects.clear();
  gcs.requests.length = 0;
});

describe('GcsObjectStorage', () => {
  it('uploads in one multipart request and reports size and SHA-256', async () => {
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const stored = await storage.put('inboxes/i1/attachments/a 1', body, { contentType: 'application/pdf' });

    expect(stored).toEqual({ size: 256, sha256: createHash('sha256').update(body).digest('hex') });
    expect(gcs.requests).toEqual([
      {
        method: 'POST',
        path: `/upload/storage/v1/b/${BUCKET}/o`,
        query: { uploadType: 'multipart', name: 'inboxes/i1/attachments/a 1' },
      },
    ]);
    expect(gcs.objects.get('inboxes/i1/attachments/a 1')).toEqual({ data: body, contentType: 'application/pdf' });
  });

  it('uploads bytes in shared memory (a raw mail the content workers read) as they are', async () => {
    const body = Buffer.from(new SharedArrayBuffer(2 * 1024 * 1024 + 3));
    for (let i = 0; i < body.length; i += 4096) body[i] = i % 251;
    const stored = await storage.put('k/shared', body, { contentType: 'message/rfc822' });
    expect(stored).toEqual({ size: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    expect(gcs.objects.get('k/shared')!.data.equals(body)).toBe(true);
  });

  it('downloads the media of an object, and answers a missing one with NotFoundError', async () => {
    await storage.put('k/one', Buffer.from('hello'), { contentType: 'text/plain' });
    gcs.requests.length = 0;

    expect((await storage.get('k/one')).toString()).toBe('hello');
    await expect(storage.get('k/missing')).rejects.toThrow(NotFoundError);
    expect(gcs.requests).toEqual([
      { method: 'GET', path: `/storage/v1/b/${BUCKET}/o/k%2Fone`, query: { alt: 'media' } },
      { method: 'GET', path: `/storage/v1/b/${BUCKET}/o/k%2Fmissing`, query: { alt: 'media' } },
    ]);
  });

  it('streams the generation whose size it read', async () => {
    const body = Buffer.alloc(3 << 20, 'x');
    await storage.put('k/big', body, { contentType: 'application/octet-stream' });
    gcs.requests.length = 0;

    const opened = await storage.open('k/big');
    expect(opened.size).toBe(body.length);
    expect(Buffer.concat(await opened.stream.toArray()).equals(body)).toBe(true);
    expect(gcs.requests).toEqual([
      { method: 'GET', path: `/storage/v1/b/${BUCKET}/o/k%2Fbig`, query: {} },
      {
        method: 'GET',
        path: `/storage/v1/b/${BUCKET}/o/k%2Fbig`,
        query: { alt: 'media', generation: expect.stringMatching(/^\d+$/) },
      },
    ]);
    await expect(storage.open('k/missing')).rejects.toThrow(NotFoundError);
  });

  it('fails the stream, rather than sending other bytes, when the object is replaced before it is read', async () => {
    await storage.put('k/one', Buffer.from('first'), { contentType: 'text/plain' });
    const opened = await storage.open('k/one');
    await storage.put('k/one', Buffer.from('second, longer'), { contentType: 'text/plain' });

    await expect(opened.stream.toArray()).rejects.toThrow('No such object');
  });

  it('deletes an object, and a missing one without error', async () => {
    await storage.put('k/one', Buffer.from('x'), { contentType: 'text/plain' });
    gcs.requests.length = 0;

    await storage.delete('k/one');
    await storage.delete('k/one');
    expect(gcs.objects.size).toBe(0);
    expect(gcs.requests.map(({ method, path }) => `${method} ${path}`)).toEqual([
      `DELETE /storage/v1/b/${BUCKET}/o/k%2Fone`,
      `DELETE /storage/v1/b/${BUCKET}/o/k%2Fone`,
    ]);
  });

  it('deletes a folder page by page, leaving names that merely share its start', async () => {
    for (const key of ['inboxes/ab/1', 'inboxes/ab/2', 'inboxes/ab/x/3', 'inboxes/abc/1', 'inboxes/ab'])
      await storage.put(key, Buffer.from(key), { contentType: 'text/plain' });
    gcs.requests.length = 0;

    expect(await storage.deletePrefix('inboxes/ab')).toBe(3);
    expect([...gcs.objects.keys()].sort()).toEqual(['inboxes/ab', 'inboxes/abc/1']);
    const lists = gcs.requests.filter((request) => request.method === 'GET');
    expect(lists).toEqual([
      { method: 'GET', path: `/storage/v1/b/${BUCKET}/o`, query: { prefix: 'inboxes/ab/' } },
      { method: 'GET', path: `/storage/v1/b/${BUCKET}/o`, query: { prefix: 'inboxes/ab/', pageToken: '2' } },
    ]);
    expect(await storage.deletePrefix('inboxes/none/')).toBe(0);
  });

  it('signs a V4 download URL that verifies with the service account public key', async () => {
    const before = new Date();
    const url = new URL(
      await storage.presignedDownloadUrl('inboxes/i1/attachments/a1', {
        expiresInSeconds: 900,
        filename: 'Bericht März "final".pdf',
        contentType: 'application/pdf',
      }),
    );
    const query = url.searchParams;
    const date = query.get('X-Goog-Date')!;

    expect(`${url.protocol}//${url.host}`).toBe(gcs.url);
    expect(url.pathname).toBe(`/${BUCKET}/inboxes/i1/attachments/a1`);
    expect(query.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
    expect(query.get('X-Goog-Credential')).toBe(`${CLIENT_EMAIL}/${date.slice(0, 8)}/auto/storage/goog4_request`);
    expect(query.get('X-Goog-Expires')).toBe('900');
    expect(query.get('X-Goog-SignedHeaders')).toBe('host');
    expect(Math.abs(Date.parse(toIso(date)) - before.getTime())).toBeLessThan(5_000);
    expect(query.get('response-content-type')).toBe('application/pdf');
    expect(query.get('response-content-disposition')).toBe(
      `attachment; filename="Bericht M_rz _final_.pdf"; filename*=UTF-8''Bericht%20M%C3%A4rz%20%22final%22.pdf`,
    );

    // The canonical request and string-to-sign as Google documents them
    // (https://cloud.google.com/storage/docs/authentication/canonical-requests, .../signatures).
    const canonicalQuery = [...query.entries()]
      .filter(([name]) => name !== 'X-Goog-Signature')
      .map(([name, value]) => [rfc3986(name), rfc3986(value)])
      .sort(([a], [b]) => (a! < b! ? -1 : 1))
      .map(([name, value]) => `${name}=${value}`)
      .join('&');
    // The library signs the host name without a port: the Host header of Google's endpoint on 443.
    const canonicalRequest = ['GET', url.pathname, canonicalQuery, `host:${url.hostname}`, '', 'host', 'UNSIGNED-PAYLOAD'].join(
      '\n',
    );
    const stringToSign = [
      'GOOG4-RSA-SHA256',
      date,
      `${date.slice(0, 8)}/auto/storage/goog4_request`,
      createHash('sha256').update(canonicalRequest).digest('hex'),
    ].join('\n');
    const signature = Buffer.from(query.get('X-Goog-Signature')!, 'hex');
    expect(verify('RSA-SHA256', Buffer.from(stringToSign), publicKey, signature)).toBe(true);
    expect(verify('RSA-SHA256', Buffer.from(`${stringToSign}x`), publicKey, signature)).toBe(false);
  });

  it('reports other failures as UpstreamError with the status and Google’s reason', async () => {
    gcs.failNext(403, 'inbox-api@... does not have storage.objects.create access');
    const failure = storage.put('k/one', Buffer.from('x'), { contentType: 'text/plain' });
    await expect(failure).rejects.toThrow(UpstreamError);
    await expect(failure).rejects.toThrow('Cloud Storage failed: 403 inbox-api@... does not have storage.objects.create access');
  });

  it('authenticates every request with a JWT signed by the service-account key', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    const impostor = new GcsObjectStorage({
      bucket: BUCKET,
      apiEndpoint: gcs.url,
      credentials: { client_email: CLIENT_EMAIL, private_key: other.toString() },
    });
    await expect(impostor.get('k/one')).rejects.toThrow('Cloud Storage failed: 401 JWT signature does not verify');
  });

  it('rejects an invalid key before any request', async () => {
    await expect(storage.get('../secrets')).rejects.toMatchObject({ code: 'bad_request' });
    expect(gcs.requests).toEqual([]);
  });
});

/** Percent-encoding of RFC 3986: everything but unreserved characters. */
function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function toIso(goog: string): string {
  return goog.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z');
}
