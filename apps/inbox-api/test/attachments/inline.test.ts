/**
 * In a mail of many attachments, those of at most INBOX_INLINE_ATTACHMENT_BYTES are kept in their
 * own record (storage_backend `inline`), larger ones in the object store; a mail of a few keeps
 * every one in the object store. Every reader takes both: downloads (binary and base64), the
 * metadata view, forwards, the reconciler.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { configProblems } from '@repo/config';
import { attachmentDisposition } from '@repo/storage';
import request from 'supertest';
import { configSchema } from '../../src/config.js';
import { keptInRecord, MANY_ATTACHMENTS, readAttachment } from '../../src/messages/attachments.js';
import { reconcile } from '../../src/reconciler.js';
import { createTestContext, type TestContext } from '../context.js';
import { mimeMessage } from '../webhooks/helpers.js';
import { download, pathOf, type Sent, sendWithFiles } from './helpers.js';

let ctx: TestContext;
let inbox: { id: string; email_address: string };
let limit: number;

beforeAll(async () => {
  ctx = await createTestContext();
  limit = ctx.deps.config.INBOX_INLINE_ATTACHMENT_BYTES;
  inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Inline', email_username: 'inline' }).expect(201)).body;
});
afterAll(() => ctx.close());

/** Files under the object store (its temporary folder included). */
async function storedFiles(): Promise<string[]> {
  const root = path.join(ctx.dataDir, 'objects');
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

const metadataOf = async (app: TestContext['app'], attachmentId: string) =>
  (await request(app).get(`/v1/attachments/${attachmentId}`).expect(200)).body as {
    storage_backend: string;
    download_url: string;
    size: number;
  };

/** Downloads an attachment through its link as bytes and as base64 JSON, and checks both against `content`. */
async function expectDownloads(app: TestContext['app'], attachmentId: string, filename: string, content: Buffer) {
  const { download_url: url } = await metadataOf(app, attachmentId);
  const binary = await download(app, pathOf(url)).expect(200);
  expect(binary.headers['content-length']).toBe(String(content.length));
  expect(binary.headers['content-disposition']).toBe(attachmentDisposition(filename));
  expect(Buffer.compare(binary.body as Buffer, content)).toBe(0);
  const base64 = await request(app)
    .get(`${pathOf(url)}&format=base64`)
    .expect(200);
  expect(base64.body).toEqual({ content: content.toString('base64'), content_type: 'application/octet-stream', filename });
}

describe('a mail of many tiny attachments', () => {
  it('keeps them in its record, no file and no journal row, each downloadable byte for byte', async () => {
    // Every byte value occurs, and lengths from 1 to 97.
    const files = Array.from({ length: 120 }, (_, i) => ({ filename: `part-${i}.bin`, content: randomBytes(1 + (i % 97)) }));
    const parts = files.map(
      (file) =>
        `--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="${file.filename}"\r\n` +
        `Content-Transfer-Encoding: base64\r\n\r\n${file.content.toString('base64')}\r\n`,
    );
    const raw = mimeMessage({
      to: inbox.email_address,
      subject: 'Many parts',
      messageId: '<many-tiny@example.com>',
      contentType: 'multipart/mixed; boundary="b"',
      body: `--b\r\nContent-Type: text/plain\r\n\r\nSee the files.\r\n${parts.join('')}--b--\r\n`,
    });
    const res = await request(ctx.app)
      .post('/webhooks/sendgrid')
      .field('email', raw)
      .field('envelope', JSON.stringify({ to: [inbox.email_address] }))
      .expect(200);

    const records = await ctx.db.attachment.findMany({ where: { messageId: res.body.messages[0].message_id } });
    expect(records).toHaveLength(files.length);
    expect(records.every((record) => record.storageBackend === 'inline' && record.storageKey === null)).toBe(true);
    expect(await storedFiles()).toEqual([]);
    expect(await ctx.db.pendingObject.count()).toBe(0);
    const byName = new Map(records.map((record) => [record.filename, record]));
    for (const file of files) await expectDownloads(ctx.app, byName.get(file.filename)!.id, file.filename, file.content);
  });
});

describe('the size limit', () => {
  let sent: Sent;
  const atLimit = () => randomBytes(limit);
  let files: { filename: string; content_type: string; content: Buffer }[];

  beforeAll(async () => {
    files = [
      { filename: 'at-limit.bin', content_type: 'application/octet-stream', content: atLimit() },
      { filename: 'one-over.bin', content_type: 'application/octet-stream', content: randomBytes(limit + 1) },
      // A mail of many attachments: the small ones are kept in their records.
      ...Array.from({ length: MANY_ATTACHMENTS - 1 }, (_, i) => ({
        filename: `note-${String(i).padStart(2, '0')}.txt`,
        content_type: 'application/octet-stream',
        content: Buffer.from(`note ${i}`),
      })),
    ];
    sent = await sendWithFiles(ctx.app, { inboxId: inbox.id, files });
  });

  it('keeps an attachment of exactly INBOX_INLINE_ATTACHMENT_BYTES in its record, one byte more in the object store', async () => {
    expect(limit).toBe(8 * 1024);
    expect(files.length).toBe(MANY_ATTACHMENTS + 1);
    const [inline, stored] = await Promise.all(
      sent.attachments.slice(0, 2).map((attachment) => ctx.db.attachment.findUniqueOrThrow({ where: { id: attachment.id } })),
    );
    expect(inline).toMatchObject({ storageBackend: 'inline', storageKey: null, size: limit });
    expect(stored).toMatchObject({ storageBackend: 'local', content: null, size: limit + 1 });
    expect(await storedFiles()).toEqual([stored!.storageKey]);
    expect(await metadataOf(ctx.app, inline!.id)).toMatchObject({ storage_backend: 'local', kept_in_record: true });
    expect(await metadataOf(ctx.app, stored!.id)).toMatchObject({ storage_backend: 'local', kept_in_record: false });
    for (const [index, file] of files.entries()) {
      await expectDownloads(ctx.app, sent.attachments[index]!.id, file.filename, file.content);
    }
  });

  it('leaves both to the reconciler untouched, and a forward carries both', async () => {
    expect(await reconcile({ ...ctx.deps, leaseSeconds: 0 })).toMatchObject({ objects: 0, partialWrites: 0 });
    const other = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Other', email_username: 'other' }).expect(201))
      .body as { id: string; email_address: string };
    const forward = await request(ctx.app)
      .post(`/v1/messages/${sent.id}/forward`)
      .send({ to: [other.email_address], body: 'FYI' })
      .expect(201);
    const copy = await ctx.db.message.findFirstOrThrow({
      where: { inboxId: other.id },
      include: { attachments: { orderBy: { filename: 'asc' } } },
    });
    const byName = [...files].sort((a, b) => a.filename.localeCompare(b.filename));
    expect(copy.attachments.map((attachment) => [attachment.filename, attachment.storageBackend])).toEqual(
      byName.map((file) => [file.filename, file.filename === 'one-over.bin' ? 'local' : 'inline']),
    );
    expect(await Promise.all(copy.attachments.map((attachment) => readAttachment(ctx.deps.storage, attachment)))).toEqual(
      byName.map((file) => file.content),
    );
    expect(forward.body.attachments).toHaveLength(files.length);
    for (const [index, file] of files.entries()) {
      await expectDownloads(ctx.app, sent.attachments[index]!.id, file.filename, file.content);
    }
  });

  it('is off at 0: every attachment goes to the object store, in a mail of many too', async () => {
    const off = await ctx.replica({ INBOX_INLINE_ATTACHMENT_BYTES: '0' });
    try {
      const tiny = Array.from({ length: MANY_ATTACHMENTS + 1 }, (_, i) => ({
        filename: `tiny-${i}.bin`,
        content_type: 'application/octet-stream',
        content: Buffer.from(`x${i}`),
      }));
      const message = await sendWithFiles(off.app, { inboxId: inbox.id, files: tiny });
      const record = await ctx.db.attachment.findUniqueOrThrow({ where: { id: message.attachments[0]!.id } });
      expect(record).toMatchObject({ storageBackend: 'local', content: null });
      expect(await storedFiles()).toContain(record.storageKey);
      await expectDownloads(off.app, record.id, 'tiny-0.bin', tiny[0]!.content);
    } finally {
      await off.close();
    }
  });
});

describe('a mail of a few attachments', () => {
  it('keeps each in the object store, however small: a file under DATA_DIR, as the backend says', async () => {
    const few = Array.from({ length: MANY_ATTACHMENTS }, (_, i) => ({
      filename: `few-${i}.txt`,
      content_type: 'text/plain',
      content: Buffer.from(`hello ${i}`),
    }));
    const message = await sendWithFiles(ctx.app, { inboxId: inbox.id, files: few });
    const records = await Promise.all(
      message.attachments.map((attachment) => ctx.db.attachment.findUniqueOrThrow({ where: { id: attachment.id } })),
    );
    expect(records.every((record) => record.storageBackend === 'local' && record.content === null)).toBe(true);
    const files = await storedFiles();
    for (const record of records) expect(files).toContain(record.storageKey);
    expect(await metadataOf(ctx.app, records[0]!.id)).toMatchObject({ storage_backend: 'local', kept_in_record: false });
  });

  it.each([
    [100, MANY_ATTACHMENTS, 8192, false],
    [100, MANY_ATTACHMENTS + 1, 8192, true],
    [8192, MANY_ATTACHMENTS + 1, 8192, true],
    [8193, MANY_ATTACHMENTS + 1, 8192, false],
    [0, 10_000, 0, false],
    [1, 10_000, 0, false],
  ])('keptInRecord(%i bytes, %i attachments, limit %i) is %s', (size, count, limit, kept) => {
    expect(keptInRecord(size, count, limit)).toBe(kept);
  });
});

describe('INBOX_INLINE_ATTACHMENT_BYTES', () => {
  it.each([
    ['-1', 'INBOX_INLINE_ATTACHMENT_BYTES must be an integer from 0 to 1048576 (got "-1")'],
    ['1048577', 'INBOX_INLINE_ATTACHMENT_BYTES must be an integer from 0 to 1048576 (got "1048577")'],
    ['8k', 'INBOX_INLINE_ATTACHMENT_BYTES must be an integer from 0 to 1048576 (got "8k")'],
  ])('refuses %s, naming the variable', (value, problem) => {
    expect(configProblems(configSchema, { INBOX_INLINE_ATTACHMENT_BYTES: value })).toEqual([problem]);
  });
});
