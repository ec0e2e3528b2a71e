/**
 * Text cut to a length (a preview, `Re: <subject>`, a blocked mail's subject) must never cut a
 * character outside the BMP (an emoji) in two: the lone surrogate left goes into an event's
 * jsonb, which Postgres refuses, failing the whole change with it (inbound mail answered 500 and
 * never stored). Each case puts an emoji across the cut.
 */
import request from 'supertest';
import { jsonbText, prefixOf } from '../../src/shared/text.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { createTestContext, type TestContext } from '../context.js';

let ctx: TestContext;
let org: { id: string };
let key: string;
beforeAll(async () => {
  ctx = await createTestContext({
    INBOX_API_KEYS: OPERATOR_KEY,
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LIMIT_PER_HOUR: '0',
  });
  org = await createOrganization(ctx.app, 'Split characters');
  key = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: org.id, permissions: ['read', 'send', 'manage'] })).key;
});
afterAll(() => ctx.close());

const inbox = (username: string) => createInbox(ctx.app, OPERATOR_KEY, { email_username: username, organization_id: org.id });
const eventsOf = async (inboxId: string, type: string) =>
  (await as(ctx.app, key).get(`/v1/events?inbox_id=${inboxId}&types=${type}`).expect(200)).body.items as unknown[];

function mailgunRoute(to: string[], subject: string, body: string, messageId: string) {
  return request(ctx.app)
    .post('/webhooks/mailgun')
    .type('form')
    .send({
      recipient: to.join(','),
      sender: 'bob@example.com',
      from: 'Bob <bob@example.com>',
      subject,
      'body-plain': body,
      'Message-Id': messageId,
      'message-headers': JSON.stringify([
        ['From', 'Bob <bob@example.com>'],
        ['To', to.join(', ')],
        ['Subject', subject],
        ['Message-Id', messageId],
      ]),
    });
}

it('cuts text by characters, and writes lone surrogates into jsonb as U+FFFD', () => {
  expect(prefixOf('ab😀c', 3)).toBe('ab');
  expect(prefixOf('ab😀c', 4)).toBe('ab😀');
  expect(prefixOf('abc', 5)).toBe('abc');
  expect(JSON.parse(jsonbText({ text: 'a\ud83d', list: ['\ude00b'], whole: '😀' }))).toEqual({
    text: 'a\ufffd',
    list: ['\ufffdb'],
    whole: '😀',
  });
});

it('stores inbound mail whose first word puts an emoji across the preview cut, by webhook and by local delivery', async () => {
  const target = await inbox('split-preview');
  // One word: 119 units, an emoji across the 120th, more letters.
  const body = `${'a'.repeat(119)}😀${'b'.repeat(20)}`;
  const res = await mailgunRoute([target.email_address], 'Preview', body, '<split-preview@mail.example.com>');
  expect({ status: res.status, stored: res.body.messages?.length }).toEqual({ status: 200, stored: 1 });
  const local = await as(ctx.app, key).post('/v1/messages', {
    inbox_id: target.id,
    to: [target.email_address],
    subject: 'Local',
    body,
  });
  expect({ status: local.status, code: local.body.error?.code }).toEqual({ status: 201, code: undefined });
  expect(await eventsOf(target.id, 'message.received')).toHaveLength(2);
});

it('replies to a message whose long subject puts an emoji across the cut of `Re: <subject>`', async () => {
  const a = await inbox('split-reply-a');
  const b = await inbox('split-reply-b');
  // 997 units: the emoji at 993-994; in `Re: <subject>` at 997-998, across the cut at 998.
  const subject = `${'s'.repeat(993)}😀zz`;
  await as(ctx.app, key)
    .post('/v1/messages', { inbox_id: a.id, to: [b.email_address], subject, body: 'Hello' })
    .expect(201);
  const [received] = (await as(ctx.app, key).get(`/v1/messages?inbox_id=${b.id}`).expect(200)).body.items as { id: string }[];
  const reply = await as(ctx.app, key).post(`/v1/messages/${received!.id}/reply`, { body: 'Thanks' });
  expect({ status: reply.status, code: reply.body.error?.code }).toEqual({ status: 201, code: undefined });
  expect(reply.body.subject).toBe(`Re: ${'s'.repeat(993)}`);
  expect(await eventsOf(a.id, 'message.received')).toHaveLength(1);
});

it('refuses mail of a blocked sender whose subject has an emoji at the cut (message.blocked), storing it for the others', async () => {
  const guarded = await inbox('split-guarded');
  const open = await inbox('split-open');
  await as(ctx.app, key)
    .post('/v1/lists', { inbox_id: guarded.id, direction: 'receive', type: 'block', entry: 'example.com' })
    .expect(201);
  const subject = `${'s'.repeat(997)}😀 tail`;
  const res = await mailgunRoute(
    [guarded.email_address, open.email_address],
    subject,
    'Hello',
    '<split-blocked@mail.example.com>',
  );
  expect({ status: res.status, blocked: res.body.blocked }).toEqual({ status: 200, blocked: [guarded.id] });
  expect(await ctx.db.message.count({ where: { inboxId: open.id } })).toBe(1);
  expect(await eventsOf(guarded.id, 'message.blocked')).toHaveLength(1);
});
