import request from 'supertest';
import { NotFoundError } from '@repo/errors';
import type { MessageContent } from '../src/messages/content/index.js';
import type { InboundMail } from '../src/messages/inbound-mail.js';
import { createDatabaseClient, preparedStatements, sizedTextArray } from '../src/database.js';
import { receiveMessage, recipientsAt } from '../src/messages/receive.js';
import { BODY_PART_CHARS, bodyParts, recordMessage } from '../src/messages/records.js';
import { createTestContext, type TestContext } from './context.js';
import { storableInboundMail } from './webhooks/helpers.js';

let ctx: TestContext;

const receiveDeps = () => ({
  ...ctx.deps,
  emailDomain: 'inbox.test',
  leaseSeconds: 60,
  inlineMaxBytes: ctx.deps.config.INBOX_INLINE_ATTACHMENT_BYTES,
});

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
      receiveMessage(receiveDeps(), inbox, await mail({ messageId: '<gone@example.com>', attachments: files }), () =>
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
    const first = await receiveMessage(receiveDeps(), inbox, await mail({ messageId: '<again@example.com>' }), content);
    const again = await receiveMessage(receiveDeps(), inbox, await mail({ messageId: '<again@example.com>' }), content);
    expect(first.duplicate).toBe(false);
    expect(again.duplicate).toBe(true);
    expect(again.message).toMatchObject({ id: first.message.id, threadId: first.message.threadId });
    expect(cleanings).toBe(1);
    const thread = await ctx.db.thread.findUniqueOrThrow({ where: { id: first.message.threadId } });
    expect(thread).toMatchObject({ messageCount: 1, participants: ['sender@example.com', 'receive@inbox.test'] });
  });
});

describe('bodies long enough to be written in parts', () => {
  // Each body over BODY_PART_CHARS, with an emoji (a surrogate pair) across the edge of its first part.
  const long = (letter: string, extra: number) => `${letter.repeat(BODY_PART_CHARS - 1)}😀${`${letter}\n`.repeat(extra)}`;
  const text = long('t', 700_000);
  const html = `<p>${long('h', 10)}</p>`;
  const contentClean = long('c', 5);
  const content = () => Promise.resolve({ contentClean, preview: 'preview' });
  const partsLeft = () => ctx.db.messageBodyPart.count();

  it('stores text, html and content_clean exactly, and the event carries them, with no part left behind', async () => {
    const inbox = await createInbox('parted');
    const { message } = await receiveMessage(
      receiveDeps(),
      inbox,
      await mail({ messageId: '<parted@example.com>', text, html }),
      content,
    );
    const stored = await ctx.db.message.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored.text.length).toBe(text.length);
    expect(stored.text === text).toBe(true);
    expect(stored.html === html).toBe(true);
    expect(stored.contentClean === contentClean).toBe(true);
    const event = await ctx.db.event.findFirstOrThrow({ where: { messageId: message.id, type: 'message.received' } });
    const data = event.data as { text: string; html: string; content_clean: string };
    expect([data.text === text, data.html === html, data.content_clean === contentClean]).toEqual([true, true, true]);
    expect(await partsLeft()).toBe(0);
  });

  it('leaves no part behind when the message is refused after its parts were written', async () => {
    const inbox = await createInbox('parted-gone');
    const gone = await mail({ to: [inbox.emailAddress], messageId: '<parted-gone@example.com>', text });
    // Found while live; its deletion begins before the message's statement, after the parts.
    const [recipient] = await recipientsAt(ctx.db, gone.to, gone);
    await ctx.db.inbox.update({ where: { id: inbox.id }, data: { deletedAt: new Date() } });
    await expect(receiveMessage(receiveDeps(), recipient!, gone, content)).rejects.toBeInstanceOf(NotFoundError);
    expect(await partsLeft()).toBe(0);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
  });

  it('refuses to write parts outside a transaction, writing nothing', async () => {
    const inbox = await createInbox('parted-alone');
    await expect(
      recordMessage(preparedStatements(ctx.db.pool), {
        inboxId: inbox.id,
        direction: 'inbound',
        status: 'received',
        providerMessageId: '<parted-alone@example.com>',
        subject: 'Long',
        subjectKey: 'long',
        from: 'sender@example.com',
        to: [inbox.emailAddress],
        cc: [],
        replyTo: [],
        text,
        html: '',
        contentClean: 'short',
        preview: 'short',
        size: text.length,
        inReplyTo: null,
        references: null,
        timestamp: new Date(),
        attachments: [],
      }),
    ).rejects.toThrow('recorded in a transaction');
    expect(await partsLeft()).toBe(0);
    expect(await ctx.db.message.count({ where: { inboxId: inbox.id } })).toBe(0);
  });
});

describe('bodyParts', () => {
  it('cuts a body into parts of the size that join back to it', () => {
    expect(bodyParts('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(bodyParts('abcdef', 3)).toEqual(['abc', 'def']);
    expect(bodyParts('', 3)).toEqual([]);
  });

  it('never cuts a surrogate pair in two', () => {
    expect(bodyParts('ab😀cd', 3)).toEqual(['ab', '😀c', 'd']);
    expect(bodyParts('😀😀😀', 3)).toEqual(['😀', '😀', '😀']);
    for (const part of bodyParts('x😀'.repeat(1000), 7)) expect(part.isWellFormed()).toBe(true);
    expect(bodyParts('x😀'.repeat(1000), 7).join('')).toBe('x😀'.repeat(1000));
  });
});

describe('recipientsAt', () => {
  it('finds the inboxes of several addresses with the messages several ids name, on a plan each connection keeps', async () => {
    const [one, two] = [await createInbox('plan-one'), await createInbox('plan-two')];
    const content = () => Promise.resolve({ contentClean: 'Hi', preview: 'Hi' });
    const first = await receiveMessage(receiveDeps(), one, await mail({ messageId: '<plan-1@example.com>' }), content);
    const reply = await mail({
      to: [one.emailAddress, two.emailAddress, 'nobody@inbox.test'],
      messageId: '<plan-2@example.com>',
      references: '<plan-0@example.com> <plan-1@example.com>',
    });
    // One connection, so that its prepared statement is the one pg_prepared_statements shows.
    const db = createDatabaseClient(ctx.deps.config.DATABASE_URL!, 1);
    try {
      for (let run = 0; run < 8; run++) {
        const found = await recipientsAt(db, reply.to, reply);
        expect(found.map((inbox) => inbox.id)).toEqual([one.id, two.id]);
        expect(found[0]!.threading.named).toEqual([
          {
            id: first.message.id,
            threadId: first.message.threadId,
            direction: 'inbound',
            providerMessageId: '<plan-1@example.com>',
          },
        ]);
        expect(found[1]!.threading.named).toEqual([]);
      }
      // Past its first 5 runs, Postgres runs the plan it made once rather than planning each run again.
      const [statement] = (
        await db.pool.query<{ custom_plans: string; generic_plans: string }>(
          `SELECT custom_plans, generic_plans FROM pg_prepared_statements WHERE statement LIKE '%AS receive_rules%'`,
        )
      ).rows;
      expect([Number(statement!.custom_plans), Number(statement!.generic_plans)]).toEqual([5, 3]);
    } finally {
      await db.$disconnect();
    }
  });

  it('sends a list as one parameter an element, padded with NULLs to a power of two', () => {
    expect(sizedTextArray(['a'])).toMatchObject({ text: 'ARRAY[$1::text]', values: ['a'] });
    expect(sizedTextArray(['a', 'b', 'c'])).toMatchObject({
      text: 'ARRAY[$1::text,$2::text,$3::text,$4::text]',
      values: ['a', 'b', 'c', null],
    });
    expect(sizedTextArray([])).toMatchObject({ text: 'ARRAY[$1::text]', values: [null] });
    const long = Array.from({ length: 65 }, (_, index) => `a${index}`);
    expect(sizedTextArray(long)).toMatchObject({ text: '$1::text[]', values: [long] });
  });

  it('finds an inbox among 40,000 addresses of a hostile mail (more than a statement may have parameters)', async () => {
    const inbox = await createInbox('among-many');
    const addresses = [...Array.from({ length: 40_000 }, (_, index) => `n${index}@inbox.test`), inbox.emailAddress];
    const found = await recipientsAt(ctx.db, addresses, await mail({ to: addresses, messageId: '<many@example.com>' }));
    expect(found.map((recipient) => recipient.id)).toEqual([inbox.id]);
  });
});
