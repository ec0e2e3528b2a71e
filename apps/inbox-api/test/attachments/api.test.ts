import { createHash, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parse } from 'content-disposition';
import request from 'supertest';
import { signedDownloadUrl } from '../../src/attachments/download.js';
import { createTestContext, type TestContext } from '../context.js';
import { download, pathOf, type Sent, sendWithFiles, textFile } from './helpers.js';

const BASE_URL = 'https://inbox.example.test';

let ctx: TestContext;
let inboxA: { id: string };
let inboxB: { id: string };
// Inbox A: thread 1 holds m1 (a.txt, b.bin) and its reply m2 (c.pdf); thread 2 holds m3 (d.txt).
// Inbox B: m4 (e.txt).
let m1: Sent;
let m2: Sent;
let m3: Sent;
let m4: Sent;
const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

const createInbox = async (username: string) =>
  (await request(ctx.app).post('/v1/inboxes').send({ name: username, email_username: username }).expect(201)).body as {
    id: string;
  };
const names = (res: request.Response) => (res.body.items as { filename: string }[]).map((item) => item.filename).sort();
const metadataOf = async (attachmentId: string) =>
  (await request(ctx.app).get(`/v1/attachments/${attachmentId}`).expect(200)).body;

beforeAll(async () => {
  ctx = await createTestContext({ PUBLIC_BASE_URL: BASE_URL });
  inboxA = await createInbox('files-a');
  inboxB = await createInbox('files-b');
  m1 = await sendWithFiles(ctx.app, {
    inboxId: inboxA.id,
    files: [textFile('a.txt'), { filename: 'b.bin', content_type: 'application/octet-stream', content: binary }],
  });
  m2 = await sendWithFiles(ctx.app, { inboxId: inboxA.id, files: [textFile('c.pdf')], replyTo: m1.thread_id });
  m3 = await sendWithFiles(ctx.app, { inboxId: inboxA.id, files: [textFile('d.txt')] });
  m4 = await sendWithFiles(ctx.app, { inboxId: inboxB.id, files: [textFile('e.txt')] });
});
afterAll(() => ctx.close());

describe('GET /v1/attachments', () => {
  it('lists the list view of an inbox’s attachments, newest first, with count and total', async () => {
    const res = await request(ctx.app).get(`/v1/attachments?inbox_id=${inboxA.id}`).expect(200);
    expect(res.body).toMatchObject({ count: 4, total: 4 });
    expect(names(res)).toEqual(['a.txt', 'b.bin', 'c.pdf', 'd.txt']);
    const items = res.body.items as { id: string; created_at: string; filename: string }[];
    expect(items.slice(0, 2).map((item) => item.filename)).toEqual(['d.txt', 'c.pdf']);
    // Ties (one message's attachments) are broken by id, newest first as well.
    const order = [...items].sort((x, y) => y.created_at.localeCompare(x.created_at) || y.id.localeCompare(x.id));
    expect(items).toEqual(order);
    expect(items.find((item) => item.filename === 'b.bin')).toEqual({
      id: m1.attachments[1]!.id,
      message_id: m1.id,
      filename: 'b.bin',
      content_type: 'application/octet-stream',
      size: 256,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('filters by thread and by message', async () => {
    expect(names(await request(ctx.app).get(`/v1/attachments?thread_id=${m1.thread_id}`).expect(200))).toEqual([
      'a.txt',
      'b.bin',
      'c.pdf',
    ]);
    expect(names(await request(ctx.app).get(`/v1/attachments?message_id=${m1.id}`).expect(200))).toEqual(['a.txt', 'b.bin']);
    expect(names(await request(ctx.app).get(`/v1/attachments?message_id=${m4.id}`).expect(200))).toEqual(['e.txt']);
  });

  it('narrows when filters are combined: an attachment matches all of them', async () => {
    const list = async (query: string) => names(await request(ctx.app).get(`/v1/attachments?${query}`).expect(200));
    expect(await list(`inbox_id=${inboxA.id}&thread_id=${m1.thread_id}`)).toEqual(['a.txt', 'b.bin', 'c.pdf']);
    expect(await list(`thread_id=${m1.thread_id}&message_id=${m2.id}`)).toEqual(['c.pdf']);
    expect(await list(`inbox_id=${inboxA.id}&thread_id=${m1.thread_id}&message_id=${m1.id}`)).toEqual(['a.txt', 'b.bin']);
    expect(await list(`thread_id=${m1.thread_id}&message_id=${m3.id}`)).toEqual([]);
    expect(await list(`inbox_id=${inboxB.id}&message_id=${m1.id}`)).toEqual([]);
  });

  it('pages with limit and offset, without overlap', async () => {
    const all = (await request(ctx.app).get(`/v1/attachments?inbox_id=${inboxA.id}`)).body.items as { id: string }[];
    const pages = [];
    for (let offset = 0; offset < 4; offset += 3) {
      pages.push((await request(ctx.app).get(`/v1/attachments?inbox_id=${inboxA.id}&limit=3&offset=${offset}`).expect(200)).body);
    }
    expect(pages.map((page) => [page.count, page.total])).toEqual([
      [3, 4],
      [1, 4],
    ]);
    expect(pages.flatMap((page) => page.items.map((item: { id: string }) => item.id))).toEqual(all.map((item) => item.id));
    expect((await request(ctx.app).get(`/v1/attachments?inbox_id=${inboxA.id}&offset=10`).expect(200)).body).toEqual({
      items: [],
      count: 0,
      total: 4,
      next_page_token: null,
    });
  });

  it('takes a limit of at most 200', async () => {
    await request(ctx.app).get(`/v1/attachments?inbox_id=${inboxA.id}&limit=200`).expect(200);
    for (const limit of ['201', '0', 'ten']) {
      const res = await request(ctx.app).get(`/v1/attachments?inbox_id=${inboxA.id}&limit=${limit}`).expect(400);
      expect(res.body.error.code).toBe('validation_error');
    }
  });

  it('answers 400 validation_error without any filter', async () => {
    const res = await request(ctx.app).get('/v1/attachments').expect(400);
    expect(res.body.error).toMatchObject({
      code: 'validation_error',
      message: expect.stringContaining('message_id, thread_id or inbox_id'),
    });
  });

  it.each([
    ['inbox_id', 'Inbox not found'],
    ['thread_id', 'Thread not found'],
    ['message_id', 'Message not found'],
  ])('answers 404 not_found for an unknown %s', async (filter, message) => {
    for (const unknown of ['01960000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const res = await request(ctx.app).get(`/v1/attachments?${filter}=${unknown}`).expect(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', message });
    }
  });
});

describe('GET /v1/attachments/{attachment_id}', () => {
  it('answers the metadata view with a download link under PUBLIC_BASE_URL', async () => {
    const attachment = m1.attachments[1]!;
    const body = await metadataOf(attachment.id);
    expect(body).toEqual({
      id: attachment.id,
      message_id: m1.id,
      filename: 'b.bin',
      content_type: 'application/octet-stream',
      size: 256,
      created_at: expect.any(String),
      disposition: 'attachment',
      storage_backend: 'local',
      kept_in_record: false,
      content_hash: `sha256:${createHash('sha256').update(binary).digest('hex')}`,
      download_url: expect.stringMatching(
        new RegExp(`^${BASE_URL}/v1/attachments/${attachment.id}/content\\?token=[\\w-]{43}&expires=\\d+$`),
      ),
    });
    const expires = Number(new URL(body.download_url).searchParams.get('expires'));
    expect(Math.abs(expires - (Date.now() / 1000 + 3600))).toBeLessThan(60);
  });

  it('answers 404 not_found for an unknown id', async () => {
    for (const unknown of ['01960000-0000-7000-8000-000000000000', 'nope']) {
      const res = await request(ctx.app).get(`/v1/attachments/${unknown}`).expect(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { attachment_id: unknown } });
    }
  });
});

describe('GET /v1/attachments/{attachment_id}/content', () => {
  it('with the download link, answers the bytes as they were sent, with their headers', async () => {
    const attachment = m1.attachments[1]!;
    const { download_url: url, content_hash: hash } = await metadataOf(attachment.id);
    const res = await download(ctx.app, pathOf(url)).expect(200);

    expect(Buffer.compare(res.body as Buffer, binary)).toBe(0);
    expect(res.headers).toMatchObject({
      'content-type': 'application/octet-stream',
      'content-length': '256',
      'content-disposition': `attachment; filename="b.bin"; filename*=UTF-8''b.bin`,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "sandbox; default-src 'none'",
      etag: `"${hash}"`,
      'cache-control': 'private',
    });
  });

  it('answers 304 to an If-None-Match with the ETag, and headers alone to HEAD', async () => {
    const { download_url: url, content_hash: hash } = await metadataOf(m1.attachments[0]!.id);
    const notModified = await request(ctx.app).get(pathOf(url)).set('if-none-match', `"${hash}"`);
    expect(notModified.status).toBe(304);
    const head = await request(ctx.app).head(pathOf(url)).expect(200);
    expect(head.headers).toMatchObject({ 'content-length': '5', 'content-type': 'text/plain' });
  });

  it('streams a large attachment byte for byte', async () => {
    const large = randomBytes(12 * 1024 * 1024);
    const sent = await sendWithFiles(ctx.app, {
      inboxId: inboxB.id,
      files: [{ filename: 'large.bin', content_type: 'application/octet-stream', content: large }],
    });
    const { download_url: url } = await metadataOf(sent.attachments[0]!.id);
    const res = await download(ctx.app, pathOf(url)).expect(200);
    expect(res.headers['content-length']).toBe(String(large.length));
    expect(Buffer.compare(res.body as Buffer, large)).toBe(0);
  });

  it('answers JSON with the content in base64 for format=base64, fields in order, with its length', async () => {
    const { download_url: url, content_hash: hash } = await metadataOf(m1.attachments[1]!.id);
    const res = await request(ctx.app)
      .get(`${pathOf(url)}&format=base64`)
      .expect(200);
    expect(res.body).toEqual({ content: binary.toString('base64'), content_type: 'application/octet-stream', filename: 'b.bin' });
    expect(Object.keys(res.body as object)).toEqual(['content', 'content_type', 'filename']);
    expect(res.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(res.text)),
      etag: `"${hash}.base64"`,
      'cache-control': 'private',
    });
    const notModified = await request(ctx.app)
      .get(`${pathOf(url)}&format=base64`)
      .set('if-none-match', `"${hash}.base64"`);
    expect(notModified.status).toBe(304);
    const head = await request(ctx.app)
      .head(`${pathOf(url)}&format=base64`)
      .expect(200);
    expect(head.headers['content-length']).toBe(res.headers['content-length']);
  });

  it('streams format=base64 of any size, INBOX_MAX_ATTACHMENT_BYTES or more', async () => {
    const large = randomBytes(12 * 1024 * 1024 + 1);
    const sent = await sendWithFiles(ctx.app, {
      inboxId: inboxB.id,
      files: [{ filename: 'large "base64".bin', content_type: 'application/octet-stream', content: large }],
    });
    const { download_url: url } = await metadataOf(sent.attachments[0]!.id);
    const small = await ctx.replica({ INBOX_MAX_ATTACHMENT_BYTES: '100' });
    try {
      const res = await request(small.app)
        .get(`${pathOf(url)}&format=base64`)
        .expect(200);
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
      expect(res.body.filename).toBe('large "base64".bin');
      expect(Buffer.from(res.body.content as string, 'base64').equals(large)).toBe(true);
    } finally {
      await small.close();
    }
  });

  it('answers 403 forbidden to a link that is missing, wrong, expired or of another attachment', async () => {
    const attachment = m1.attachments[0]!;
    const { download_url: url } = await metadataOf(attachment.id);
    const { token, expires } = Object.fromEntries(new URL(url).searchParams);
    const otherLink = new URL((await metadataOf(m3.attachments[0]!.id)).download_url).search;
    const expired = new URL(
      signedDownloadUrl(
        attachment.id,
        { baseUrl: BASE_URL, secret: ctx.deps.downloadSecret, ttlSeconds: 60 },
        Date.now() - 120_000,
      ),
    ).search;
    const content = `/v1/attachments/${attachment.id}/content`;
    for (const [query, message] of [
      ['', 'needs the token and expires'],
      ['?format=base64', 'needs the token and expires'],
      [`?token=${token}`, 'needs the token and expires'],
      [`?expires=${expires}`, 'needs the token and expires'],
      [`?token=${token!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}&expires=${expires}`, 'not valid'],
      [`?token=${token}&expires=${Number(expires) + 1}`, 'not valid'],
      [otherLink, 'not valid'],
      [expired, 'has expired'],
    ] as const) {
      const res = await request(ctx.app).get(`${content}${query}`);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 403, code: 'forbidden' });
      expect(res.body.error.message).toContain(message);
    }
  });

  it('answers 403 to a wrong link whether or not the attachment exists, 404 to a right link of one that is gone', async () => {
    const unknown = '01960000-0000-7000-8000-000000000000';
    await request(ctx.app).get(`/v1/attachments/${unknown}/content?token=x&expires=1`).expect(403);
    const link = signedDownloadUrl(unknown, { baseUrl: BASE_URL, secret: ctx.deps.downloadSecret, ttlSeconds: 60 });
    const res = await request(ctx.app).get(pathOf(link)).expect(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('never serves stored content that is not the one recorded (cut short, longer, other bytes): 502 before a byte, else cut', async () => {
    const size = 200 * 1024;
    const sent = await sendWithFiles(ctx.app, {
      inboxId: inboxB.id,
      files: [{ filename: 'changed.bin', content_type: 'application/octet-stream', content: randomBytes(size) }],
    });
    const record = await ctx.db.attachment.findUniqueOrThrow({ where: { id: sent.attachments[0]!.id } });
    const file = path.join(ctx.dataDir, 'objects', ...record.storageKey!.split('/'));
    const { download_url: url } = await metadataOf(record.id);
    // The whole of it read before the answer (one chunk): refused with a clear error, naming the attachment.
    await writeFile(file, randomBytes(1000));
    for (const format of ['', '&format=base64']) {
      const res = await request(ctx.app).get(`${pathOf(url)}${format}`);
      expect({ format, status: res.status, error: res.body.error }).toEqual({
        format,
        status: 502,
        error: expect.objectContaining({ code: 'upstream_error', details: { attachment_id: record.id } }),
      });
    }
    // Once bytes are out (a file of several chunks), the connection is cut short of its Content-Length.
    const server = ctx.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const get = (query: string) =>
      new Promise<{ status: number; complete: boolean; received: number; promised: number }>((resolve) => {
        http.get(`http://127.0.0.1:${port}${pathOf(url)}${query}`, (res) => {
          let received = 0;
          res.on('data', (chunk: Buffer) => (received += chunk.length));
          res.on('close', () =>
            resolve({
              status: res.statusCode!,
              complete: res.complete,
              received,
              promised: Number(res.headers['content-length']),
            }),
          );
        });
      });
    try {
      for (const changed of [randomBytes(size), randomBytes(size + 1)]) {
        await writeFile(file, changed);
        for (const query of ['', '&format=base64']) {
          const cut = await get(query);
          expect({ length: changed.length, query, status: cut.status, complete: cut.complete }).toEqual({
            length: changed.length,
            query,
            status: 200,
            complete: false,
          });
          expect(cut.received).toBeLessThan(cut.promised);
        }
      }
    } finally {
      server.close();
    }
  });

  it('answers 404, naming no storage key, when the stored content has gone', async () => {
    const sent = await sendWithFiles(ctx.app, {
      inboxId: inboxB.id,
      files: [textFile('lost.txt', 'x'.repeat(ctx.deps.config.INBOX_INLINE_ATTACHMENT_BYTES + 1))],
    });
    const record = await ctx.db.attachment.findUniqueOrThrow({ where: { id: sent.attachments[0]!.id } });
    await rm(path.join(ctx.dataDir, 'objects', ...record.storageKey!.split('/')));
    const { download_url: url } = await metadataOf(record.id);
    const res = await request(ctx.app).get(pathOf(url)).expect(404);
    expect(res.body.error).toEqual({
      code: 'not_found',
      message: 'The content of this attachment is missing from storage',
      details: { attachment_id: record.id },
    });
    // A forward that would carry it says the same.
    const forward = await request(ctx.app)
      .post(`/v1/messages/${sent.id}/forward`)
      .send({ to: ['a@example.com'] });
    expect({ status: forward.status, error: forward.body.error }).toEqual({ status: 404, error: res.body.error });
  });
});

describe('hostile filenames', () => {
  it.each([
    ['quotes', 'say "hi" "there".txt'],
    ['backslashes', 'C:\\temp\\x.txt'],
    ['a path', '../../../etc/passwd'],
    ['unicode', 'Bericht März – 東京 📎.pdf'],
    ['RFC 5987 specials and percent signs', "it's 100% (a) *draft*.txt"],
    ['the longest name accepted', `${'ü'.repeat(251)}.txt`],
  ])('a name with %s is downloaded under the same name', async (_case, filename) => {
    const sent = await sendWithFiles(ctx.app, { inboxId: inboxB.id, files: [textFile(filename, 'x')] });
    const { download_url: url } = await metadataOf(sent.attachments[0]!.id);
    const res = await download(ctx.app, pathOf(url)).expect(200);
    const header = res.headers['content-disposition']!;
    expect(parse(header)).toEqual({
      type: 'attachment',
      parameters: expect.objectContaining({ filename }),
    });
    // A client that reads only the plain filename= gets no folder to write into.
    expect(/ filename="([^"]*)"/.exec(header)![1]).not.toMatch(/[/\\]/);
  });

  it('a path as a name keeps its separators only in filename*', async () => {
    const sent = await sendWithFiles(ctx.app, { inboxId: inboxB.id, files: [textFile('../../../etc/passwd', 'x')] });
    const { download_url: url } = await metadataOf(sent.attachments[0]!.id);
    const res = await download(ctx.app, pathOf(url)).expect(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename=".._.._.._etc_passwd"; filename*=UTF-8''..%2F..%2F..%2Fetc%2Fpasswd`,
    );
  });

  it.each([
    ['CR and LF', 'a\r\nb.txt'],
    ['NUL', 'a\u0000b.txt'],
  ])('a name with %s is refused when sent', async (_case, filename) => {
    const res = await request(ctx.app)
      .post('/v1/messages')
      .send({
        inbox_id: inboxB.id,
        to: ['x@example.com'],
        subject: 's',
        body: 'b',
        attachments: [{ filename, content_type: 'text/plain', content: '' }],
      });
    expect(res.status).toBe(400);
    expect(res.body.error.details.issues[0].loc).toEqual(['body', 'attachments', 0, 'filename']);
  });
});

describe('API keys', () => {
  let keyed: TestContext;
  const key = { authorization: 'Bearer key-one' };
  beforeAll(async () => {
    keyed = await ctx.replica({ INBOX_API_KEYS: 'key-one' });
  });
  afterAll(() => keyed.close());

  it('are needed to list attachments and read their metadata', async () => {
    expect((await request(keyed.app).get(`/v1/attachments?inbox_id=${inboxA.id}`)).status).toBe(401);
    expect((await request(keyed.app).get(`/v1/attachments/${m1.attachments[0]!.id}`)).status).toBe(401);
    expect((await request(keyed.app).get(`/v1/attachments?inbox_id=${inboxA.id}`).set(key)).status).toBe(200);
  });

  it('are not needed with a download link, which alone opens the content', async () => {
    const { download_url: url } = (await request(keyed.app).get(`/v1/attachments/${m1.attachments[1]!.id}`).set(key).expect(200))
      .body;
    const res = await download(keyed.app, pathOf(url)).expect(200);
    expect(Buffer.compare(res.body as Buffer, binary)).toBe(0);
    expect((await request(keyed.app).get(`${pathOf(url)}&format=base64`)).status).toBe(200);
  });

  it('do not open local content without the link, and a wrong link is 403 with or without a key', async () => {
    const content = `/v1/attachments/${m1.attachments[1]!.id}/content`;
    expect((await request(keyed.app).get(content)).status).toBe(401);
    expect((await request(keyed.app).get(content).set(key)).status).toBe(403);
    expect((await request(keyed.app).get(`${content}?token=forged&expires=9999999999`)).status).toBe(403);
    expect((await request(keyed.app).get(`${content}?token=forged&expires=9999999999`).set(key)).status).toBe(403);
  });
});

describe('an inbox being deleted', () => {
  it('has no attachments any more: metadata, content and lists answer 404', async () => {
    const inbox = await createInbox('files-leaving');
    const sent = await sendWithFiles(ctx.app, { inboxId: inbox.id, files: [textFile('bye.txt')] });
    const attachmentId = sent.attachments[0]!.id;
    const { download_url: url } = await metadataOf(attachmentId);
    await ctx.db.inbox.update({ where: { id: inbox.id }, data: { deletedAt: new Date() } });

    await request(ctx.app).get(`/v1/attachments/${attachmentId}`).expect(404);
    await request(ctx.app).get(pathOf(url)).expect(404);
    await request(ctx.app).get(`/v1/attachments?inbox_id=${inbox.id}`).expect(404);
    await request(ctx.app).get(`/v1/attachments?thread_id=${sent.thread_id}`).expect(404);
    await request(ctx.app).get(`/v1/attachments?message_id=${sent.id}`).expect(404);
  });
});

it('documents the three routes in /openapi.json', async () => {
  const { paths } = (await request(ctx.app).get('/openapi.json').expect(200)).body;
  expect(Object.keys(paths['/v1/attachments'])).toEqual(['get']);
  expect(paths['/v1/attachments/{attachment_id}'].get.responses['200']).toBeDefined();
  const content = paths['/v1/attachments/{attachment_id}/content'].get;
  expect(content.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(
    expect.arrayContaining(['attachment_id', 'format', 'token', 'expires']),
  );
  expect(Object.keys(content.responses)).toEqual(expect.arrayContaining(['200', '403', '404']));
  expect(content.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AttachmentContent' });
});
