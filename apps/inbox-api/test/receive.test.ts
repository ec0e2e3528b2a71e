import request from 'supertest';
import { NotFoundError } from '@repo/errors';
import type { MessageContent } from '../src/messages/content/index.js';
import type { InboundMail } from '../src/messages/inbound-mail.js';
import { receiveMessage } from '../src/messages/receive.js';
import { createTestContext, type TestContext } from './context.js';
import { storableInboundMail } from './webhooks/helpers.js';

let ctx: TestContext;

const receiveDeps = () => ({ ...ctx.deps, emailDomain: 'inbox.test', leaseSeconds: 60 });

const mail = (fields: Partial<InboundMail>) => storableInboundMail({ to: ['receive@inbox.test'], ...fields });

async function createInbox(username: string) {
  const { id } = (await request(ctx.app).post('/v1/inboxes').send({ name: username, email_username: username })).body as {
    id: string;
  };
  return ctx.db.inbox.findUniqueOrThrow({ where: { id } });
}

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('receiveMessage', () => {
  it('stores nothing, files included, in an inbox whose deletion has begun', async () => {
    const inbox = await createInbox('going');
    await ctx.db.inbox.update({ where: { id: inbox.id }, data: { deletedAt: new Date() } });
    const files = [{ filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('a') }];
    await expect(
      receiveMessage(receiveDeps(), inbox, mail({ messageId: '<gone@example.com>', attachments: files }), () =>
        ctx.deps.content.cleanMessage({ html: '', text: 'Hi' }),
      ),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
    expect(await ctx.db.thread.count({ where: { inboxId: inbox.id } })).toBe(0);
    expect(await ctx.db.pendingObject.count()).toBe(0);
  });

  it('answers a redelivery with the first message, without asking for the content again', async () => {
    const inbox = await createInbox('again');
    let cleanings = 0;
    const content = (): Promise<MessageContent> => {
      cleanings += 1;
      return Promise.resolve({ contentClean: 'Hi', preview: 'Hi' });
    };
    const first = await receiveMessage(receiveDeps(), inbox, mail({ messageId: '<again@example.com>' }), content);
    const again = await receiveMessage(receiveDeps(), inbox, mail({ messageId: '<again@example.com>' }), content);
    expect(first.duplicate).toBe(false);
    expect(again.duplicate).toBe(true);
    expect(again.message).toMatchObject({ id: first.message.id, threadId: first.message.threadId });
    expect(cleanings).toBe(1);
    const thread = await ctx.db.thread.findUniqueOrThrow({ where: { id: first.message.threadId } });
    expect(thread).toMatchObject({ messageCount: 1, participants: ['sender@example.com', 'receive@inbox.test'] });
  });
});
