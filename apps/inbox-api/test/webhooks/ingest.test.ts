import { createHmac, randomBytes } from 'node:crypto';
import request from 'supertest';
import { createTestContext, type TestContext } from '../context.js';
import { mimeMessage, postSns, sesNotification } from './helpers.js';

let ctx: TestContext;
let agent: { id: string; email_address: string };

beforeAll(async () => {
  ctx = await createTestContext();
  agent = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Agent', email_username: 'agent' })).body;
});
afterAll(() => ctx.close());

const thread = async (threadId: string) => (await request(ctx.app).get(`/v1/threads/${threadId}`)).body;
const messageOf = async (id: string) => (await request(ctx.app).get(`/v1/messages/${id}`)).body;

/** Sends raw mail to the agent through the webhook of `provider`, as that provider would. */
function deliver(provider: 'ses' | 'sendgrid' | 'mailgun', raw: string, recipients = [agent.email_address]) {
  switch (provider) {
    case 'ses':
      return postSns(ctx.app, sesNotification(raw, { recipients }));
    case 'sendgrid':
      return request(ctx.app)
        .post('/webhooks/sendgrid')
        .field('email', raw)
        .field('envelope', JSON.stringify({ to: recipients }));
    case 'mailgun':
      return request(ctx.app).post('/webhooks/mailgun').field('body-mime', raw).field('recipient', recipients.join(','));
  }
}

describe('one thread across providers', () => {
  it('joins a Mailgun reply, a SendGrid raw reply and an SES reply to the thread the agent started', async () => {
    const sent = (
      await request(ctx.app)
        .post('/v1/messages')
        .send({ inbox_id: agent.id, to: ['carol@example.com'], subject: 'Quarterly numbers', body: 'Could you send them?' })
    ).body;
    const ourId = (await messageOf(sent.id)).provider_message_id as string;

    const viaMailgun = await deliver(
      'mailgun',
      mimeMessage({
        from: 'Carol <carol@example.com>',
        to: agent.email_address,
        subject: 'Re: Quarterly numbers',
        messageId: '<m1@example.com>',
        inReplyTo: ourId,
        references: ourId,
        body: 'Here they are.',
      }),
    );
    const viaSendgrid = await deliver(
      'sendgrid',
      mimeMessage({
        from: 'Dan <dan@example.com>',
        to: agent.email_address,
        cc: 'carol@example.com',
        subject: 'RE: Quarterly numbers',
        messageId: '<m2@example.com>',
        references: `${ourId} <m1@example.com>`,
        body: 'Adding my part.',
      }),
    );
    // No threading headers at all (a client that drops them): the subject and a shared participant decide.
    const viaSes = await deliver(
      'ses',
      mimeMessage({
        from: 'carol@example.com',
        to: agent.email_address,
        subject: 'AW: [finance] Re: Quarterly numbers',
        messageId: '<m3@example.com>',
        body: 'One correction.',
      }),
    );
    for (const res of [viaMailgun, viaSendgrid, viaSes]) {
      expect(res.status).toBe(200);
      expect(res.body.messages[0].thread_id).toBe(sent.thread_id);
    }
    const view = await thread(sent.thread_id);
    expect(view.messages.map((message: { role: string; content: string }) => [message.role, message.content])).toEqual([
      ['assistant', 'Could you send them?'],
      ['user', 'Here they are.'],
      ['user', 'Adding my part.'],
      ['user', 'One correction.'],
    ]);
    const record = await ctx.db.thread.findUniqueOrThrow({ where: { id: sent.thread_id } });
    expect(record).toMatchObject({
      messageCount: 4,
      participants: [agent.email_address, 'carol@example.com', 'dan@example.com'],
    });
  });

  it('does not join by subject without a shared participant, nor a thread quiet for over 30 days', async () => {
    const first = await deliver(
      'ses',
      mimeMessage({
        from: 'erin@example.com',
        to: agent.email_address,
        subject: 'Lunch?',
        messageId: '<l1@example.com>',
        body: 'Lunch?',
      }),
    );
    const stranger = await deliver(
      'ses',
      mimeMessage({
        from: 'frank@example.com',
        to: agent.email_address,
        subject: 'Re: Lunch?',
        messageId: '<l2@example.com>',
        body: 'Me too',
      }),
    );
    expect(stranger.body.messages[0].thread_id).not.toBe(first.body.messages[0].thread_id);

    const old = await deliver(
      'ses',
      mimeMessage({
        from: 'gina@example.com',
        to: agent.email_address,
        subject: 'Old topic',
        messageId: '<o1@example.com>',
        date: 'Mon, 01 Jan 2024 10:00:00 +0000',
        body: 'Old',
      }),
    );
    const late = await deliver(
      'ses',
      mimeMessage({
        from: 'gina@example.com',
        to: agent.email_address,
        subject: 'Re: Old topic',
        messageId: '<o2@example.com>',
        date: 'Mon, 05 Feb 2024 10:00:00 +0000',
        body: 'Late',
      }),
    );
    expect(late.body.messages[0].thread_id).not.toBe(old.body.messages[0].thread_id);
  });

  it('keeps last_message_at at the newest message when mail arrives out of order', async () => {
    const newer = await deliver(
      'ses',
      mimeMessage({
        from: 'hank@example.com',
        to: agent.email_address,
        subject: 'Order',
        messageId: '<order-2@example.com>',
        references: '<order-1@example.com>',
        date: 'Tue, 05 Mar 2024 12:00:00 +0000',
        body: 'Second',
      }),
    );
    const older = await deliver(
      'ses',
      mimeMessage({
        from: 'ivy@example.com',
        to: agent.email_address,
        subject: 'Re: Order',
        messageId: '<order-1b@example.com>',
        inReplyTo: '<order-2@example.com>',
        date: 'Tue, 05 Mar 2024 09:00:00 +0000',
        body: 'First',
      }),
    );
    expect(older.body.messages[0].thread_id).toBe(newer.body.messages[0].thread_id);
    const view = await thread(newer.body.messages[0].thread_id);
    expect(view.last_message_at).toBe('2024-03-05T12:00:00.000Z');
    expect((await ctx.db.thread.findUniqueOrThrow({ where: { id: view.id } })).participants).toEqual([
      'hank@example.com',
      agent.email_address,
      'ivy@example.com',
    ]);
  });
});

describe('routing and content', () => {
  it('stores a message to two inboxes once each, and counts an unknown address of our domain', async () => {
    const other = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Other', email_username: 'other' })).body;
    const unknown = 'nobody@inbox.test';
    const raw = mimeMessage({
      to: `${agent.email_address}, ${unknown}`,
      cc: other.email_address,
      subject: 'To many',
      messageId: '<many@example.com>',
      body: 'Hello all',
    });
    const res = await deliver('ses', raw, [agent.email_address, other.email_address, unknown, 'someone@elsewhere.example']);
    expect(res.status).toBe(200);
    expect(res.body.unrouted).toEqual([unknown]);
    expect(res.body.messages.map((message: { inbox_id: string }) => message.inbox_id).sort()).toEqual(
      [agent.id, other.id].sort(),
    );
    expect(await ctx.db.message.count({ where: { providerMessageId: '<many@example.com>' } })).toBe(2);
  });

  it('stores HTML-only mail with content_clean from its HTML', async () => {
    const res = await deliver(
      'sendgrid',
      mimeMessage({
        to: agent.email_address,
        subject: 'HTML only',
        contentType: 'text/html; charset=utf-8',
        body: '<div><h2>Status</h2><p>All <b>green</b>.</p><img src="https://t.example/p.gif" width="1" height="1"></div>',
      }),
    );
    const message = await messageOf(res.body.messages[0].message_id);
    expect(message).toMatchObject({ text: '', content_clean: '## Status\n\nAll **green**.' });
  });

  it.each([
    ['ISO-2022-JP', 'iso-2022-jp', Buffer.from('1b244224332473244b2441244f1b2842', 'hex'), 'こんにちは'],
    ['Windows-1251', 'windows-1251', Buffer.from('cff0e8e2e5f2', 'hex'), 'Привет'],
    ['ISO-8859-15', 'iso-8859-15', Buffer.from('a42035', 'hex'), '€ 5'],
  ])('reads %s mail', async (_name, charset, bytes, text) => {
    const head = mimeMessage({
      to: agent.email_address,
      subject: `Charset ${charset}`,
      contentType: `text/plain; charset=${charset}`,
      body: '',
    });
    const raw = Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
    const res = await postSns(ctx.app, sesNotification(raw, { recipients: [agent.email_address], encoding: 'BASE64' }));
    expect(res.status).toBe(200);
    expect((await messageOf(res.body.messages[0].message_id)).content_clean).toBe(text);
  });

  it('stores mail without a Message-ID once, however often it is delivered', async () => {
    const raw = mimeMessage({
      to: agent.email_address,
      subject: 'No id',
      date: 'Tue, 05 Mar 2024 10:00:00 +0000',
      body: 'Nameless',
    });
    const first = await deliver('ses', raw);
    const again = await deliver('mailgun', raw);
    expect(again.body.messages[0]).toMatchObject({ message_id: first.body.messages[0].message_id, duplicate: true });
  });

  it('stores a message delivered many times at once exactly once (the database decides)', async () => {
    const raw = mimeMessage({ to: agent.email_address, subject: 'Raced', messageId: '<raced@example.com>', body: 'Once' });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => deliver((['ses', 'sendgrid', 'mailgun'] as const)[i % 3]!, raw)),
    );
    expect(results.map((res) => res.status)).toEqual(Array(8).fill(200));
    expect(new Set(results.map((res) => res.body.messages[0].message_id)).size).toBe(1);
    expect(results.filter((res) => !res.body.messages[0].duplicate)).toHaveLength(1);
    expect(await ctx.db.message.count({ where: { providerMessageId: '<raced@example.com>' } })).toBe(1);
  });

  it('keeps NUL bytes and broken text out of what it stores, rather than refusing the mail', async () => {
    const raw = mimeMessage({
      to: agent.email_address,
      subject: 'Nul\u0000 in subject',
      messageId: '<nul@example.com>',
      body: 'Before\u0000after',
    });
    const res = await deliver('ses', raw);
    expect(res.status).toBe(200);
    expect(await messageOf(res.body.messages[0].message_id)).toMatchObject({
      subject: 'Nul in subject',
      text: expect.stringMatching(/^Beforeafter/),
    });
  });
});

describe('a signed Mailgun delivery, end to end', () => {
  it('stores the message and refuses its replay', async () => {
    const key = 'mailgun-key';
    const signed = await ctx.replica({ MAILGUN_WEBHOOK_SIGNING_KEY: key });
    try {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const token = randomBytes(20).toString('hex');
      const signature = createHmac('sha256', key)
        .update(timestamp + token)
        .digest('hex');
      const raw = mimeMessage({
        to: agent.email_address,
        subject: 'Signed mime',
        messageId: '<signed-mime@example.com>',
        body: 'Signed',
      });
      const post = () =>
        request(signed.app)
          .post('/webhooks/mailgun')
          .field('body-mime', raw)
          .field('timestamp', timestamp)
          .field('token', token)
          .field('signature', signature);
      expect((await post()).status).toBe(200);
      expect((await post()).status).toBe(401);
    } finally {
      await signed.close();
    }
  });
});
