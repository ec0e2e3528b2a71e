import { readdir } from 'node:fs/promises';
import path from 'node:path';
import request from 'supertest';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /v1/inboxes', () => {
  it('creates an inbox whose address is the lower-cased local part at the configured domain, in `default` in open mode', async () => {
    const res = await request(ctx.app).post('/v1/inboxes').send({ name: 'Support agent', email_username: 'Support.Team' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Support agent',
      email_address: 'support.team@inbox.test',
      organization_id: 'default',
      sending_enabled: true,
      send_policy: 'direct',
      created_at: expect.any(String),
    });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
  });

  it('answers 409 conflict for an address that is taken, whatever its case', async () => {
    await request(ctx.app).post('/v1/inboxes').send({ name: 'First', email_username: 'taken' }).expect(201);
    const res = await request(ctx.app).post('/v1/inboxes').send({ name: 'Second', email_username: 'TAKEN' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: {
        code: 'conflict',
        message: 'The address taken@inbox.test is taken',
        details: { email_address: 'taken@inbox.test' },
      },
    });
  });

  it.each([
    ['a missing name', { email_username: 'x1' }, ['body', 'name'], 'missing'],
    ['an empty name', { name: '  ', email_username: 'x2' }, ['body', 'name'], 'string_too_short'],
    ['a missing username', { name: 'X' }, ['body', 'email_username'], 'missing'],
    ['a username with @', { name: 'X', email_username: 'a@b' }, ['body', 'email_username'], 'string_pattern_mismatch'],
    ['a username with a space', { name: 'X', email_username: 'a b' }, ['body', 'email_username'], 'string_pattern_mismatch'],
    ['a leading dot', { name: 'X', email_username: '.ab' }, ['body', 'email_username'], 'string_pattern_mismatch'],
    ['a double dot', { name: 'X', email_username: 'a..b' }, ['body', 'email_username'], 'string_pattern_mismatch'],
    ['65 characters', { name: 'X', email_username: 'a'.repeat(65) }, ['body', 'email_username'], 'string_too_long'],
    ['a number for the name', { name: 42, email_username: 'x3' }, ['body', 'name'], 'string_type'],
    ['an unknown field', { name: 'X', email_username: 'x4', domain: 'evil.com' }, ['body', 'domain'], 'extra_forbidden'],
    [
      'a line break in the name',
      { name: 'Support\r\nBcc: x@evil.com', email_username: 'x5' },
      ['body', 'name'],
      'string_pattern_mismatch',
    ],
    ['a NUL in the name', { name: 'Sup\u0000port', email_username: 'x6' }, ['body', 'name'], 'string_pattern_mismatch'],
    [
      'a lone surrogate in the name',
      { name: 'Sup\udc00port', email_username: 'x7' },
      ['body', 'name'],
      'string_pattern_mismatch',
    ],
    ['a NUL in the username', { name: 'X', email_username: 'x\u00008' }, ['body', 'email_username'], 'string_pattern_mismatch'],
  ])('refuses %s with 400 validation_error pointing at the field', async (_case, body, loc, type) => {
    const res = await request(ctx.app).post('/v1/inboxes').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.issues).toEqual([expect.objectContaining({ loc, type })]);
  });

  it('refuses a body that is not UTF-8 rather than store U+FFFD', async () => {
    const body = Buffer.concat([Buffer.from('{"name": "Caf'), Buffer.from([0xe9]), Buffer.from('", "email_username": "cafe"}')]);
    const res = await request(ctx.app)
      .post('/v1/inboxes')
      .set('content-type', 'application/json')
      .serialize(() => body as unknown as string)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body.error.details.issues).toEqual([
      { loc: ['body'], msg: 'Request body is not valid UTF-8', type: 'value_error' },
    ]);
    expect(await ctx.db.inbox.count({ where: { emailAddress: { startsWith: 'cafe@' } } })).toBe(0);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await request(ctx.app).post('/v1/inboxes').set('content-type', 'application/json').send('{"name": "x",');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
  });

  it('accepts every character RFC 5322 allows in an unquoted local part', async () => {
    const res = await request(ctx.app).post('/v1/inboxes').send({ name: 'X', email_username: "a!#$%&'*+/=?^_`{|}~-z" });
    expect(res.status).toBe(201);
  });
});

describe('GET /v1/inboxes/{inbox_id}', () => {
  it('returns the inbox', async () => {
    const created = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Get me', email_username: 'get-me' })).body;
    expect((await request(ctx.app).get(`/v1/inboxes/${created.id}`)).body).toEqual(created);
  });

  it.each([
    ['an unknown id', '0195a6c1-0000-7000-8000-000000000000'],
    ['an id that is not a UUID', 'nope'],
    ['SQL', "1' OR '1'='1"],
  ])('answers 404 not_found for %s', async (_case, id) => {
    const res = await request(ctx.app).get(`/v1/inboxes/${encodeURIComponent(id)}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'not_found', message: 'Inbox not found', details: { inbox_id: id } });
  });
});

describe('GET /v1/inboxes', () => {
  it('lists inboxes newest first with count and total', async () => {
    const fresh = await createTestContext();
    try {
      for (const name of ['one', 'two', 'three']) {
        await request(fresh.app).post('/v1/inboxes').send({ name, email_username: name }).expect(201);
      }
      const first = await request(fresh.app).get('/v1/inboxes?limit=2');
      expect(first.body).toMatchObject({ count: 2, total: 3 });
      expect(first.body.items.map((inbox: { name: string }) => inbox.name)).toEqual(['three', 'two']);
      const second = await request(fresh.app).get('/v1/inboxes?limit=2&offset=2');
      expect(second.body).toMatchObject({ count: 1, total: 3, items: [expect.objectContaining({ name: 'one' })] });
      expect((await request(fresh.app).get('/v1/inboxes?limit=500')).status).toBe(400);
    } finally {
      await fresh.close();
    }
  });
});

describe('DELETE /v1/inboxes/{inbox_id}', () => {
  it('answers 204 and removes the inbox, its threads, messages and stored attachment bytes', async () => {
    const inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Doomed', email_username: 'doomed' })).body;
    const sent = await request(ctx.app)
      .post('/v1/messages')
      .send({
        inbox_id: inbox.id,
        to: ['someone@example.com'],
        subject: 'With a file',
        body: 'See attached',
        // A mail of a few attachments: both in object storage, the small one too.
        attachments: [
          { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('hello').toString('base64') },
          { filename: 'b.bin', content_type: 'application/octet-stream', content: Buffer.alloc(16 * 1024, 7).toString('base64') },
        ],
      })
      .expect(201);
    const objects = path.join(ctx.dataDir, 'objects', 'inboxes', inbox.id);
    expect((await readdir(objects, { recursive: true })).length).toBeGreaterThan(0);

    const res = await request(ctx.app).delete(`/v1/inboxes/${inbox.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await request(ctx.app).get(`/v1/inboxes/${inbox.id}`)).status).toBe(404);
    expect((await request(ctx.app).get(`/v1/threads/${sent.body.thread_id}`)).status).toBe(404);
    expect((await request(ctx.app).get(`/v1/messages/${sent.body.id}`)).status).toBe(404);
    expect(await ctx.db.attachment.count({ where: { inboxId: inbox.id } })).toBe(0);
    await expect(readdir(objects)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('answers 404 for an inbox that does not exist (or no longer does)', async () => {
    const inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Twice', email_username: 'twice' })).body;
    await request(ctx.app).delete(`/v1/inboxes/${inbox.id}`).expect(204);
    expect((await request(ctx.app).delete(`/v1/inboxes/${inbox.id}`)).status).toBe(404);
  });
});
