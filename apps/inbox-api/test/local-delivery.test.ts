import request from 'supertest';
import { readAttachment } from '../src/messages/attachments.js';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('local delivery (EMAIL_PROVIDER=local)', () => {
  it('A writes to B and B replies: each side sees one two-message thread with the right roles', async () => {
    const alice = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Alice', email_username: 'alice' })).body;
    const bob = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Bob', email_username: 'bob' })).body;

    const question = (
      await request(ctx.app)
        .post('/v1/messages')
        .send({ inbox_id: alice.id, to: [bob.email_address], subject: 'Lunch?', body: 'Are you free at **noon**?' })
        .expect(201)
    ).body;

    const bobThreads = (await request(ctx.app).get(`/v1/threads?inbox_id=${bob.id}`)).body;
    expect(bobThreads.total).toBe(1);
    const bobThreadId = bobThreads.items[0].id;
    await request(ctx.app)
      .post('/v1/messages')
      .send({ inbox_id: bob.id, to: [alice.email_address], subject: 'Re: Lunch?', body: 'Yes!', reply_to_thread_id: bobThreadId })
      .expect(201);

    const aliceThread = (await request(ctx.app).get(`/v1/threads/${question.thread_id}`)).body;
    expect(
      aliceThread.messages.map((m: { role: string; author: string; content: string }) => [m.role, m.author, m.content]),
    ).toEqual([
      ['assistant', 'alice@inbox.test', 'Are you free at **noon**?'],
      ['user', 'bob@inbox.test', 'Yes!'],
    ]);
    const bobThread = (await request(ctx.app).get(`/v1/threads/${bobThreadId}`)).body;
    expect(bobThread.messages.map((m: { role: string; author: string }) => [m.role, m.author])).toEqual([
      ['user', 'alice@inbox.test'],
      ['assistant', 'bob@inbox.test'],
    ]);
    expect((await request(ctx.app).get(`/v1/threads?inbox_id=${alice.id}`)).body.total).toBe(1);
    expect((await request(ctx.app).get(`/v1/threads?inbox_id=${bob.id}`)).body.total).toBe(1);
  });

  it('delivers attachments to the recipient as copies of its own', async () => {
    const a = (await request(ctx.app).post('/v1/inboxes').send({ name: 'A', email_username: 'att-a' })).body;
    const b = (await request(ctx.app).post('/v1/inboxes').send({ name: 'B', email_username: 'att-b' })).body;
    await request(ctx.app)
      .post('/v1/messages')
      .send({
        inbox_id: a.id,
        to: [b.email_address, 'outside@example.com'],
        subject: 'File',
        body: 'Here',
        attachments: [
          { filename: 'plan.pdf', content_type: 'application/pdf', content: Buffer.from('%PDF-1.7').toString('base64') },
        ],
      })
      .expect(201);
    const [received] = await ctx.db.attachment.findMany({ where: { inboxId: b.id } });
    expect(received).toMatchObject({ filename: 'plan.pdf', contentType: 'application/pdf', size: 8 });
    // Deleting the sender leaves the recipient's copy intact.
    await request(ctx.app).delete(`/v1/inboxes/${a.id}`).expect(204);
    expect((await readAttachment(ctx.deps.storage, received!)).toString()).toBe('%PDF-1.7');
  });
});
