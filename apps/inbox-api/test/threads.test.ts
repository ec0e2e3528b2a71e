import request from 'supertest';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
let inbox: { id: string; email_address: string };
beforeAll(async () => {
  ctx = await createTestContext();
  inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Threads', email_username: 'threads' })).body;
});
afterAll(() => ctx.close());

const send = (body: Record<string, unknown>) =>
  request(ctx.app)
    .post('/v1/messages')
    .send({ inbox_id: inbox.id, to: ['peer@example.com'], body: 'text', ...body })
    .expect(201);

describe('GET /v1/threads/{thread_id}', () => {
  it('shows the thread as a conversation, oldest first, with summary null', async () => {
    const first = (await send({ subject: 'Topic', body: 'First' })).body;
    await send({ subject: 'Re: Topic', body: 'Second', reply_to_thread_id: first.thread_id });
    const res = await request(ctx.app).get(`/v1/threads/${first.thread_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: first.thread_id,
      inbox_id: inbox.id,
      subject: 'Topic',
      last_message_at: expect.any(String),
      summary: null,
      messages: [
        { id: first.id, role: 'assistant', author: inbox.email_address, content: 'First', timestamp: expect.any(String) },
        {
          id: expect.any(String),
          role: 'assistant',
          author: inbox.email_address,
          content: 'Second',
          timestamp: expect.any(String),
        },
      ],
    });
  });

  it('answers 404 for an unknown thread', async () => {
    const res = await request(ctx.app).get('/v1/threads/0195a6c1-0000-7000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('GET /v1/threads', () => {
  it('lists thread summaries of an inbox, newest activity first', async () => {
    const fresh = (await request(ctx.app).post('/v1/inboxes').send({ name: 'List', email_username: 'list-threads' })).body;
    const sendFrom = (body: Record<string, unknown>) =>
      request(ctx.app)
        .post('/v1/messages')
        .send({ inbox_id: fresh.id, to: ['x@example.com'], body: 'b', ...body })
        .expect(201);
    const older = (await sendFrom({ subject: 'Older' })).body;
    await sendFrom({ subject: 'Newer', to: ['y@example.com'] });
    await sendFrom({ subject: 'Re: Older', reply_to_thread_id: older.thread_id, to: ['z@example.com'] });

    const res = await request(ctx.app).get(`/v1/threads?inbox_id=${fresh.id}`);
    expect(res.body).toMatchObject({ count: 2, total: 2 });
    expect(res.body.items[0]).toEqual({
      id: older.thread_id,
      subject: 'Older',
      last_message_at: expect.any(String),
      message_count: 2,
      participants: ['list-threads@inbox.test', 'x@example.com', 'z@example.com'],
      labels: ['sent'],
      summary: null,
    });
    expect(res.body.items[1]).toMatchObject({ subject: 'Newer', message_count: 1 });
    expect((await request(ctx.app).get(`/v1/threads?inbox_id=${fresh.id}&limit=1&offset=1`)).body.items[0].subject).toBe('Newer');
  });

  it('needs inbox_id (400) that exists (404)', async () => {
    expect((await request(ctx.app).get('/v1/threads')).status).toBe(400);
    expect((await request(ctx.app).get('/v1/threads?inbox_id=0195a6c1-0000-7000-8000-000000000000')).status).toBe(404);
  });
});
