import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { describeObjectStorageContract } from '../../../../packages/storage/test/contract.js';
import { type FakeGcs, startFakeGcs } from '../../../../packages/storage/test/fake-gcs.js';
import { base64Json } from '../../src/attachments/download.js';
import { reconcile } from '../../src/reconciler.js';
import { MANY_ATTACHMENTS } from '../../src/messages/attachments.js';
import { createEmbeddedTestContext, createTestContext, type EmbeddedTestContext, type TestContext } from '../context.js';
import { download, pathOf, sendWithFiles, textFile } from './helpers.js';

const sha256 = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

async function createInbox(app: TestContext['app'], username: string, headers: Record<string, string> = {}) {
  return (await request(app).post('/v1/inboxes').set(headers).send({ name: username, email_username: username }).expect(201))
    .body as { id: string };
}

describe('STORAGE_BACKEND=database', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    // Every attachment in the object store, however small: what is tested here is the backend.
    ctx = await createTestContext({ STORAGE_BACKEND: 'database' });
  });
  afterAll(() => ctx.close());

  // The contract suite of packages/storage, on the app's migrated table through its Prisma client.
  describeObjectStorageContract('the app’s database storage', async () => {
    await ctx.db.$executeRaw`TRUNCATE stored_objects`;
    return ctx.deps.storage;
  });

  describe('through the API', () => {
    beforeEach(() => ctx.db.$executeRaw`TRUNCATE stored_objects`);

    it('stores attachments as rows and serves them through signed links', async () => {
      const inbox = await createInbox(ctx.app, 'rows');
      const large = randomBytes(6 * 1024 * 1024);
      const sent = await sendWithFiles(ctx.app, {
        inboxId: inbox.id,
        files: [
          textFile('small.txt', 'small'),
          { filename: 'large.bin', content_type: 'application/octet-stream', content: large },
        ],
      });
      const metadata = (await request(ctx.app).get(`/v1/attachments/${sent.attachments[1]!.id}`).expect(200)).body;
      expect(metadata).toMatchObject({ storage_backend: 'database', content_hash: sha256(large), size: large.length });
      expect(metadata.download_url).toMatch(/\/content\?token=[\w-]{43}&expires=\d+$/);
      // Without PUBLIC_BASE_URL, the link leads to the address the client used.
      const viaProxy = await request(ctx.app)
        .get(`/v1/attachments/${sent.attachments[1]!.id}`)
        .set('host', 'inbox.internal:8443')
        .expect(200);
      expect(viaProxy.body.download_url).toMatch(/^http:\/\/inbox\.internal:8443\/v1\/attachments\//);

      const res = await download(ctx.app, pathOf(metadata.download_url)).expect(200);
      expect(res.headers['content-length']).toBe(String(large.length));
      expect(Buffer.compare(res.body as Buffer, large)).toBe(0);
      const small = (await request(ctx.app).get(`/v1/attachments/${sent.attachments[0]!.id}`)).body;
      expect(
        (
          await request(ctx.app)
            .get(`${pathOf(small.download_url)}&format=base64`)
            .expect(200)
        ).body,
      ).toEqual({
        content: Buffer.from('small').toString('base64'),
        content_type: 'text/plain',
        filename: 'small.txt',
      });
      await request(ctx.app).get(`/v1/attachments/${sent.attachments[0]!.id}/content`).expect(403);

      const rows = await ctx.db.storedObject.findMany({ select: { key: true, size: true, sha256: true } });
      expect(rows.map((row) => `sha256:${row.sha256}`).sort()).toEqual([sha256(Buffer.from('small')), sha256(large)].sort());
      expect(rows.every((row) => row.key.startsWith(`inboxes/${inbox.id}/attachments/`))).toBe(true);
    });

    it('removes an inbox’s rows with the inbox, and leaves other inboxes’ rows', async () => {
      const leaving = await createInbox(ctx.app, 'leaving');
      const staying = await createInbox(ctx.app, 'staying');
      await sendWithFiles(ctx.app, { inboxId: leaving.id, files: [textFile('a.txt'), textFile('b.txt')] });
      await sendWithFiles(ctx.app, { inboxId: staying.id, files: [textFile('c.txt')] });

      await request(ctx.app).delete(`/v1/inboxes/${leaving.id}`).expect(204);
      const keys = (await ctx.db.storedObject.findMany({ select: { key: true } })).map((row) => row.key);
      expect(keys).toEqual([expect.stringMatching(new RegExp(`^inboxes/${staying.id}/attachments/`))]);
    });

    it('lets the reconciler remove rows whose record never came', async () => {
      await ctx.deps.storage.put('inboxes/x/attachments/abandoned', Buffer.from('a'), { contentType: 'text/plain' });
      await ctx.db.pendingObject.create({
        data: { storageKey: 'inboxes/x/attachments/abandoned', expiresAt: new Date(Date.now() - 1000) },
      });
      expect((await reconcile({ ...ctx.deps, leaseSeconds: 60 })).objects).toBe(1);
      expect(await ctx.db.storedObject.count()).toBe(0);
      expect(await ctx.db.pendingObject.count()).toBe(0);
    });
  });
});

describe('STORAGE_BACKEND=database on the embedded database (no DATABASE_URL)', () => {
  let embedded: EmbeddedTestContext;
  beforeAll(async () => {
    embedded = await createEmbeddedTestContext({ STORAGE_BACKEND: 'database' });
  }, 120_000);
  afterAll(() => embedded.close());

  it('stores, serves and reconciles attachments on its single connection', async () => {
    const { app, deps, db } = embedded;
    const inbox = await createInbox(app, 'embedded');
    const content = randomBytes(256 * 1024);
    const sent = await sendWithFiles(app, {
      inboxId: inbox.id,
      files: [{ filename: 'data.bin', content_type: 'application/octet-stream', content }],
    });
    const { download_url: url, storage_backend: backend } = (await request(app).get(`/v1/attachments/${sent.attachments[0]!.id}`))
      .body;
    expect(backend).toBe('database');
    expect(Buffer.compare((await download(app, pathOf(url)).expect(200)).body as Buffer, content)).toBe(0);

    // Removing an abandoned object needs the connection the reconciler's own statements use.
    await deps.storage.put('inboxes/x/attachments/abandoned', Buffer.from('a'), { contentType: 'text/plain' });
    await db.pendingObject.create({
      data: { storageKey: 'inboxes/x/attachments/abandoned', expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await reconcile({ ...deps, leaseSeconds: 60 })).objects).toBe(1);
    await expect(deps.storage.get('inboxes/x/attachments/abandoned')).rejects.toMatchObject({ code: 'not_found' });
  }, 60_000);
});

describe('STORAGE_BACKEND=gcs', () => {
  const BUCKET = 'inbox-attachments';
  const CLIENT_EMAIL = 'inbox-api@example-project.iam.gserviceaccount.com';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let gcs: FakeGcs;
  let ctx: TestContext;
  beforeAll(async () => {
    gcs = await startFakeGcs({ bucket: BUCKET, clientEmail: CLIENT_EMAIL, publicKey });
    ctx = await createTestContext({
      STORAGE_BACKEND: 'gcs',
      GCS_BUCKET: BUCKET,
      GCS_API_ENDPOINT: gcs.url,
      GCS_CREDENTIALS_JSON: JSON.stringify({
        client_email: CLIENT_EMAIL,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      }),
      INBOX_DOWNLOAD_URL_TTL_SECONDS: '900',
    });
  });
  afterAll(async () => {
    await ctx.close();
    await gcs.close();
  });

  it('answers a V4 signed Cloud Storage URL as download_url', async () => {
    const inbox = await createInbox(ctx.app, 'cloud');
    const sent = await sendWithFiles(ctx.app, { inboxId: inbox.id, files: [textFile('Bericht "März".txt', 'hello')] });
    const metadata = (await request(ctx.app).get(`/v1/attachments/${sent.attachments[0]!.id}`).expect(200)).body;
    expect(metadata).toMatchObject({ storage_backend: 'gcs', content_hash: sha256(Buffer.from('hello')) });

    const url = new URL(metadata.download_url);
    const record = await ctx.db.attachment.findUniqueOrThrow({ where: { id: sent.attachments[0]!.id } });
    expect(`${url.origin}${decodeURIComponent(url.pathname)}`).toBe(`${gcs.url}/${BUCKET}/${record.storageKey}`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      'X-Goog-Algorithm': 'GOOG4-RSA-SHA256',
      'X-Goog-Expires': '900',
      'X-Goog-Signature': expect.stringMatching(/^[0-9a-f]+$/),
      'response-content-type': 'text/plain',
      'response-content-disposition': `attachment; filename="Bericht _M_rz_.txt"; filename*=UTF-8''Bericht%20%22M%C3%A4rz%22.txt`,
    });
  });

  it('serves an attachment kept in its record (a mail of many) through the app’s own link, never the bucket', async () => {
    const inline = await ctx.replica({ INBOX_INLINE_ATTACHMENT_BYTES: '8192' });
    try {
      const inbox = await createInbox(inline.app, 'cloud-inline');
      const objects = gcs.objects.size;
      const files = Array.from({ length: MANY_ATTACHMENTS + 1 }, (_, i) =>
        textFile(`note-${i}.txt`, i === 0 ? 'kept in the row' : `${i}`),
      );
      const sent = await sendWithFiles(inline.app, { inboxId: inbox.id, files });
      const metadata = (await request(inline.app).get(`/v1/attachments/${sent.attachments[0]!.id}`).expect(200)).body;
      expect(metadata).toMatchObject({
        storage_backend: 'gcs',
        kept_in_record: true,
        content_hash: sha256(Buffer.from('kept in the row')),
      });
      expect(metadata.download_url).toMatch(/\/content\?token=[\w-]{43}&expires=\d+$/);
      expect(gcs.objects.size).toBe(objects);
      expect((await download(inline.app, pathOf(metadata.download_url)).expect(200)).body).toEqual(
        Buffer.from('kept in the row'),
      );
      // The API key alone opens only what is in the bucket.
      await request(inline.app).get(`/v1/attachments/${sent.attachments[0]!.id}/content`).expect(403);
    } finally {
      await inline.close();
    }
  });

  it('streams the content from the bucket with the API key, no link needed', async () => {
    const keyed = await ctx.replica({ INBOX_API_KEYS: 'key-one' });
    try {
      const key = { authorization: 'Bearer key-one' };
      const inbox = await createInbox(keyed.app, 'cloud-keyed', key);
      const large = randomBytes(5 * 1024 * 1024);
      const sent = await sendWithFiles(keyed.app, {
        inboxId: inbox.id,
        files: [{ filename: 'large.bin', content_type: 'application/octet-stream', content: large }],
        headers: key,
      });
      const content = `/v1/attachments/${sent.attachments[0]!.id}/content`;

      const res = await download(keyed.app, content, key).expect(200);
      expect(res.headers).toMatchObject({ 'content-length': String(large.length), 'content-type': 'application/octet-stream' });
      expect(Buffer.compare(res.body as Buffer, large)).toBe(0);
      const base64 = (await request(keyed.app).get(`${content}?format=base64`).set(key).expect(200)).body;
      expect(Buffer.from(base64.content, 'base64').equals(large)).toBe(true);
      expect((await request(keyed.app).get(content)).status).toBe(401);
      expect((await request(keyed.app).get(`${content}?token=forged&expires=9999999999`)).status).toBe(403);
    } finally {
      await keyed.close();
    }
  });

  it.each(['binary', 'base64'])(
    'cuts the connection of a %s download when the bucket fails midway: the client sees a failure, not a whole answer',
    async (format) => {
      const inbox = await createInbox(ctx.app, `cloud-cut-${format}`);
      const content = randomBytes(4 * 1024 * 1024);
      const sent = await sendWithFiles(ctx.app, {
        inboxId: inbox.id,
        files: [{ filename: 'cut.bin', content_type: 'application/octet-stream', content }],
      });
      const server = ctx.app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const { port } = server.address() as AddressInfo;
        gcs.cutNextDownload(1024 * 1024);
        const res = await fetch(`http://127.0.0.1:${port}/v1/attachments/${sent.attachments[0]!.id}/content?format=${format}`);
        expect(res.status).toBe(200);
        const announced = Number(res.headers.get('content-length'));
        const file = { filename: 'cut.bin', contentType: 'application/octet-stream', contentHash: '' };
        expect(announced).toBe(format === 'binary' ? content.length : base64Json(file, content.length).length);
        await expect(res.arrayBuffer()).rejects.toThrow('terminated');
        // The next download is whole again.
        const again = await fetch(`http://127.0.0.1:${port}/v1/attachments/${sent.attachments[0]!.id}/content?format=${format}`);
        expect((await again.arrayBuffer()).byteLength).toBe(announced);
      } finally {
        server.close();
      }
    },
  );
});
