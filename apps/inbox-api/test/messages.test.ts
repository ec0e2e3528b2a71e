import request from 'supertest';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
let inbox: { id: string };
let other: { id: string };
beforeAll(async () => {
  ctx = await createTestContext();
  inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'List', email_username: 'list' })).body;
  other = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Other', email_username: 'other' })).body;
  for (let i = 1; i <= 5; i++) {
    await request(ctx.app)
      .post('/v1/messages')
      .send({ inbox_id: inbox.id, to: ['x@example.com'], subject: `Message ${i}`, body: `Body ${i}` })
      .expect(201);
  }
  await request(ctx.app)
    .post('/v1/messages')
    .send({ inbox_id: other.id, to: ['x@example.com'], subject: 'Elsewhere', body: 'x' })
    .expect(201);
});
afterAll(() => ctx.close());

describe('GET /v1/messages', () => {
  it('lists full messages of an inbox, newest first, with count and total', async () => {
    const res = await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&limit=2`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: 2, total: 5 });
    expect(res.body.items.map((m: { subject: string }) => m.subject)).toEqual(['Message 5', 'Message 4']);
    expect(Object.keys(res.body.items[0]).sort()).toEqual(
      [
        'id',
        'thread_id',
        'inbox_id',
        'direction',
        'provider_message_id',
        'subject',
        'from_address',
        'to_addresses',
        'cc_addresses',
        'bcc_addresses',
        'reply_to_addresses',
        'text',
        'html',
        'content_clean',
        'timestamp',
        'labels',
        'preview',
        'size',
        'in_reply_to',
        'references',
        'metadata',
        'delivery_status',
        'delivery_detail',
        'created_at',
      ].sort(),
    );
    const last = await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&limit=2&offset=4`);
    expect(last.body).toMatchObject({ count: 1, total: 5, items: [expect.objectContaining({ subject: 'Message 1' })] });
  });

  it('defaults to 50 per page and allows at most 200', async () => {
    expect((await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}`)).body.count).toBe(5);
    const tooMany = await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&limit=201`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details.issues[0]).toMatchObject({ loc: ['query', 'limit'], type: 'less_than_equal' });
  });

  it('filters by thread', async () => {
    const [message] = (await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&limit=1`)).body.items;
    const res = await request(ctx.app).get(`/v1/messages?thread_id=${message.thread_id}`);
    expect(res.body).toMatchObject({ total: 1, items: [expect.objectContaining({ id: message.id })] });
  });

  it('answers 400 validation_error without inbox_id and thread_id', async () => {
    const res = await request(ctx.app).get('/v1/messages');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'validation_error',
      message: 'Invalid request: query.inbox_id: inbox_id or thread_id is required',
    });
  });

  it('answers 404 for unknown filters and for a thread of another inbox', async () => {
    expect((await request(ctx.app).get('/v1/messages?inbox_id=0195a6c1-0000-7000-8000-000000000000')).status).toBe(404);
    expect((await request(ctx.app).get('/v1/messages?thread_id=nope')).status).toBe(404);
    const [foreign] = (await request(ctx.app).get(`/v1/messages?inbox_id=${other.id}`)).body.items;
    expect((await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&thread_id=${foreign.thread_id}`)).status).toBe(404);
  });

  it('refuses unknown query parameters', async () => {
    expect((await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&sort=asc`)).status).toBe(400);
  });
});

describe('GET /v1/messages/{message_id}', () => {
  it('returns one message, or 404', async () => {
    const [listed] = (await request(ctx.app).get(`/v1/messages?inbox_id=${inbox.id}&limit=1`)).body.items;
    expect((await request(ctx.app).get(`/v1/messages/${listed.id}`)).body).toEqual(listed);
    expect((await request(ctx.app).get('/v1/messages/0195a6c1-0000-7000-8000-000000000000')).status).toBe(404);
  });
});
