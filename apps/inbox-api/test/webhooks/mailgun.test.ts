import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { readAttachment } from '../../src/messages/attachments.js';
import { BODY_PART_CHARS } from '../../src/messages/records.js';
import type { WebhookBody } from '../../src/webhooks/body.js';
import { replayToken, requestDigest } from '../../src/webhooks/replay.js';
import { createTestContext, type TestContext } from '../context.js';
import { ALL_BYTES } from '../mail/helpers.js';
import { mimeMessage } from './helpers.js';

const SIGNING_KEY = 'key-signing-0123456789';
let ctx: TestContext;
let signed: TestContext;
let target: { id: string; email_address: string };

beforeAll(async () => {
  ctx = await createTestContext();
  signed = await ctx.replica({ MAILGUN_WEBHOOK_SIGNING_KEY: SIGNING_KEY });
  target = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Mailgun', email_username: 'mg' })).body;
});
afterAll(async () => {
  await signed.close();
  await ctx.close();
});

/** Mailgun's signature fields for now (or `at`), signed with `key`. */
function signature(key = SIGNING_KEY, at = new Date()) {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const token = randomBytes(25).toString('hex');
  return {
    timestamp,
    token,
    signature: createHmac('sha256', key)
      .update(timestamp + token)
      .digest('hex'),
  };
}

/** A message's fields as a Mailgun route's forward() posts them. */
function routeFields(subject: string, extra: Record<string, string> = {}) {
  const messageId = `<${randomUUID()}@mail.example.com>`;
  return {
    recipient: target.email_address,
    sender: 'bob@example.com',
    from: 'Bob Example <bob@example.com>',
    subject,
    'body-plain': `Hi,\r\n\r\n${subject} body.\r\n\r\nOn Mon, Alice wrote:\r\n> earlier\r\n`,
    'body-html': `<p>Hi,</p><p>${subject} body.</p><blockquote type="cite">earlier</blockquote>`,
    'Message-Id': messageId,
    'message-headers': JSON.stringify([
      ['From', 'Bob Example <bob@example.com>'],
      ['To', `Mailgun <${target.email_address}>`],
      ['Cc', '"Doe, Jane" <jane@example.com>'],
      ['Subject', subject],
      ['Message-Id', messageId],
      ['Date', 'Tue, 05 Mar 2024 10:02:00 +0000'],
      ['X-Mailgun-Spf', 'Pass'],
      ['X-Mailgun-Dkim-Check-Result', 'Pass'],
      ['X-Mailgun-Sflag', 'No'],
      ['X-Mailgun-Sscore', '0.3'],
    ]),
    ...extra,
  };
}

const messagesWith = async (subject: string) =>
  (await request(ctx.app).get(`/v1/messages?inbox_id=${target.id}&q=${encodeURIComponent(subject)}`)).body.items as {
    id: string;
  }[];

describe('POST /webhooks/mailgun: routes', () => {
  it('stores a multipart post with every attachment-N byte for byte, inline ones by content-id-map', async () => {
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), ALL_BYTES]);
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const fields = routeFields('Multipart with files', {
      'attachment-count': '2',
      'content-id-map': JSON.stringify({ '<logo@x>': 'attachment-2' }),
    });
    let post = request(ctx.app).post('/webhooks/mailgun');
    for (const [name, value] of Object.entries(fields)) post = post.field(name, value);
    const res = await post
      .attach('attachment-1', pdf, { filename: 'Übersicht "Q1".pdf', contentType: 'application/pdf' })
      .attach('attachment-2', png, { filename: 'logo.png', contentType: 'image/png' });
    expect(res.status).toBe(200);

    const message = (await request(ctx.app).get(`/v1/messages/${res.body.messages[0].message_id}`)).body;
    expect(message).toMatchObject({
      from_address: 'bob@example.com',
      to_addresses: [target.email_address],
      cc_addresses: ['jane@example.com'],
      subject: 'Multipart with files',
      provider_message_id: fields['Message-Id'],
      timestamp: '2024-03-05T10:02:00.000Z',
      content_clean: 'Hi,\n\nMultipart with files body.',
      labels: ['received', 'unread'],
      metadata: { authentication: { provider: 'mailgun', spf: 'pass', dkim: 'pass', spam: 'pass', spam_score: 0.3 } },
    });
    const attachments = await ctx.db.attachment.findMany({ where: { messageId: message.id }, orderBy: { filename: 'desc' } });
    expect(attachments.map((a) => [a.filename, a.contentType, a.disposition, a.size])).toEqual([
      ['Übersicht "Q1".pdf', 'application/pdf', 'attachment', pdf.length],
      ['logo.png', 'image/png', 'inline', png.length],
    ]);
    expect(await readAttachment(ctx.deps.storage, attachments[0]!)).toEqual(pdf);
    expect(await readAttachment(ctx.deps.storage, attachments[1]!)).toEqual(png);
  });

  it('stores an urlencoded post, labelled spam when Mailgun flags it, the Message-Id field standing in for the header', async () => {
    const fields = routeFields('Urlencoded spam', {
      'message-headers': JSON.stringify([
        ['From', 'Spammer <spam@example.net>'],
        ['To', target.email_address],
        ['Subject', 'Urlencoded spam'],
        ['X-Mailgun-Sflag', 'Yes'],
        ['X-Mailgun-Sscore', '12.5'],
        ['X-Mailgun-Spf', 'Fail'],
      ]),
    });
    const res = await request(ctx.app).post('/webhooks/mailgun').type('form').send(new URLSearchParams(fields).toString());
    expect(res.status).toBe(200);
    const message = (await request(ctx.app).get(`/v1/messages/${res.body.messages[0].message_id}`)).body;
    expect(message).toMatchObject({
      from_address: 'spam@example.net',
      // message-headers has no Message-Id: the field of that name gives it.
      provider_message_id: fields['Message-Id'],
      labels: ['received', 'unread', 'spam', 'unauthenticated'],
      metadata: { authentication: { spam: 'fail', spam_score: 12.5, spf: 'fail' } },
    });
  });

  it('stores a 3 MB urlencoded post exactly (its body in shared memory, its long bodies written in parts)', async () => {
    // Over a million characters each: text, html and content_clean go to Postgres in parts (records.ts).
    const line = 'Grüße aus Köln 😀 — a line of the report\r\n';
    const plain = line.repeat(30_000);
    const html = `<p>${'Grüße 😀 '.repeat(150_000)}</p>`;
    const fields = routeFields('Urlencoded, long', { 'body-plain': plain, 'body-html': html });
    const body = new URLSearchParams(fields).toString();
    expect(body.length).toBeGreaterThan(3_000_000);
    const res = await request(ctx.app).post('/webhooks/mailgun').type('form').send(body);
    expect(res.status).toBe(200);
    const message = (await request(ctx.app).get(`/v1/messages/${res.body.messages[0].message_id}`)).body;
    const expected = plain.replaceAll('\r\n', '\n');
    expect(message.text.length).toBe(expected.length);
    expect(message.text === expected).toBe(true);
    expect(message.html === html).toBe(true);
    const { contentClean } = await ctx.deps.content.cleanMessage({ html, text: expected });
    expect(contentClean.length).toBeGreaterThan(BODY_PART_CHARS);
    expect(message.content_clean === contentClean).toBe(true);
    expect(await ctx.db.messageBodyPart.count()).toBe(0);
  });

  it('stores the forward-MIME mode (body-mime)', async () => {
    const mime = mimeMessage({
      from: '"Doe, John" <john@example.org>',
      to: target.email_address,
      subject: '=?UTF-8?B?w4RwZmVsIHVuZCBCaXJuZW4=?=',
      messageId: '<mime-mode-1@example.org>',
      contentType: 'text/plain; charset=iso-8859-1',
      extraHeaders: ['Content-Transfer-Encoding: quoted-printable'],
      body: 'Gr=FC=DFe aus K=F6ln',
    });
    const res = await request(ctx.app)
      .post('/webhooks/mailgun')
      .field('recipient', target.email_address)
      .field('body-mime', mime);
    expect(res.status).toBe(200);
    const message = (await request(ctx.app).get(`/v1/messages/${res.body.messages[0].message_id}`)).body;
    expect(message).toMatchObject({
      from_address: 'john@example.org',
      subject: 'Äpfel und Birnen',
      content_clean: 'Grüße aus Köln',
    });
    expect(message.text.trimEnd()).toBe('Grüße aus Köln');
  });

  it('stores a JSON post, its signature nested as Mailgun webhooks send it', async () => {
    const fields = routeFields('As JSON');
    const res = await request(signed.app)
      .post('/webhooks/mailgun')
      .send({ ...fields, signature: signature() });
    expect(res.status).toBe(200);
    expect(await messagesWith('As JSON')).toHaveLength(1);
  });

  it('answers 400 for garbage of each content type, storing nothing', async () => {
    const before = await ctx.db.message.count();
    const cases: [string, string][] = [
      ['multipart/form-data; boundary=zz', '--zz\r\nContent-Disposition: form-data; name="nonsense"\r\n\r\n1\r\n--zz--\r\n'],
      ['application/x-www-form-urlencoded', 'a=1&b=2'],
      ['application/json', '{"body-mime": "not a mail at all"}'],
      ['application/json', '{"message-headers": "[[1,2,3]]"}'],
    ];
    for (const [type, body] of cases) {
      const res = await request(ctx.app).post('/webhooks/mailgun').set('content-type', type).send(body);
      expect({ type, status: res.status }).toEqual({ type, status: 400 });
    }
    expect(await ctx.db.message.count()).toBe(before);
  });
});

describe('Mailgun signatures (MAILGUN_WEBHOOK_SIGNING_KEY set)', () => {
  const post = (fields: Record<string, string>) =>
    request(signed.app).post('/webhooks/mailgun').type('form').send(new URLSearchParams(fields).toString());

  it('takes a good signature, and refuses the same token again as a replay', async () => {
    const fields = { ...routeFields('Signed once'), ...signature() };
    expect((await post(fields)).status).toBe(200);
    const replay = await post(fields);
    expect({ status: replay.status, message: replay.body.error.message }).toEqual({
      status: 401,
      message: 'This Mailgun token was used before: the request is a replay',
    });
    // Replicas share the tokens: another instance refuses it too.
    const other = await ctx.replica({ MAILGUN_WEBHOOK_SIGNING_KEY: SIGNING_KEY });
    try {
      expect(
        (await request(other.app).post('/webhooks/mailgun').type('form').send(new URLSearchParams(fields).toString())).status,
      ).toBe(401);
    } finally {
      await other.close();
    }
    expect(await messagesWith('Signed once')).toHaveLength(1);
  });

  it.each([
    ['no signature', () => ({})],
    ['a signature made with another key', () => signature('another-key')],
    ['a timestamp older than 5 minutes', () => signature(SIGNING_KEY, new Date(Date.now() - 6 * 60 * 1000))],
    ['a timestamp in the future', () => signature(SIGNING_KEY, new Date(Date.now() + 6 * 60 * 1000))],
    ['a signature of another token', () => ({ ...signature(), token: 'f'.repeat(50) })],
    ['a signature that is no hex', () => ({ ...signature(), signature: 'zz' })],
  ])('refuses %s with 401, storing nothing', async (_case, sign) => {
    const subject = `Forged ${randomUUID()}`;
    const res = await post({ ...routeFields(subject), ...sign() });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
    expect(await messagesWith(subject)).toHaveLength(0);
  });

  it('leaves the token open to Mailgun’s retry when the request fails, and to no other request', async () => {
    const fields = { ...routeFields('Retried'), 'message-headers': '[]', from: '', ...signature() };
    delete (fields as Record<string, string>).from;
    expect((await post(fields)).status).toBe(400);
    expect((await post(fields)).status).toBe(400);
    expect(await ctx.db.webhookToken.findUniqueOrThrow({ where: { token: fields.token } })).toMatchObject({ handled: false });
    const other = {
      ...routeFields('Other fields, same token'),
      token: fields.token,
      timestamp: fields.timestamp,
      signature: fields.signature,
    };
    expect((await post(other)).status).toBe(401);
    expect(await messagesWith('Other fields, same token')).toHaveLength(0);
  });

  it('refuses a used token carrying another message, storing nothing of it', async () => {
    const signed = signature();
    expect((await post({ ...routeFields('First with token'), ...signed })).status).toBe(200);
    const forged = await post({ ...routeFields('Forged with token'), ...signed });
    expect(forged.status).toBe(401);
    expect(await messagesWith('Forged with token')).toHaveLength(0);
  });

  it('records the token of a request that stores nothing new, and refuses its replay', async () => {
    const fields = routeFields('Stored unsigned first');
    expect(
      (await request(ctx.app).post('/webhooks/mailgun').type('form').send(new URLSearchParams(fields).toString())).status,
    ).toBe(200);
    const redelivery = { ...fields, ...signature() };
    expect((await post(redelivery)).body.messages).toEqual([expect.objectContaining({ duplicate: true })]);
    expect((await post(redelivery)).status).toBe(401);

    const forNoInbox = {
      ...routeFields('For nobody', {
        recipient: 'nobody@inbox.test',
        'message-headers': JSON.stringify([
          ['From', 'bob@example.com'],
          ['To', 'nobody@inbox.test'],
        ]),
      }),
      ...signature(),
    };
    expect((await post(forNoInbox)).body).toMatchObject({ dropped: 'no_inbox' });
    expect((await post(forNoInbox)).status).toBe(401);
  });

  it('stores one copy when the same signed request arrives twice at once', async () => {
    const fields = { ...routeFields('Twice at once'), ...signature() };
    const answers = await Promise.all([post(fields), post(fields), post(fields)]);
    // Each is stored, a duplicate, or a replay: never a second copy.
    for (const res of answers) {
      expect(res.status === 401 || (res.status === 200 && res.body.messages.length === 1)).toBe(true);
    }
    expect(answers.filter((res) => res.status === 200 && res.body.messages[0].duplicate === false)).toHaveLength(1);
    expect(await messagesWith('Twice at once')).toHaveLength(1);
    expect(await ctx.db.webhookToken.count({ where: { token: fields.token } })).toBe(1);
  });

  it('refuses (401) a request whose token a request with other fields claimed, before that one stored anything', async () => {
    const fields = { ...routeFields('Claimed by another'), ...signature() };
    const token = replayToken(fields.token, Number(fields.timestamp));
    await ctx.db.webhookToken.create({
      data: { token: token.token, expiresAt: token.expiresAt, requestDigest: 'f'.repeat(64), handled: false },
    });
    expect((await post(fields)).status).toBe(401);
    expect(await messagesWith('Claimed by another')).toHaveLength(0);
  });

  it('stores nothing of a replay with other fields racing a request for several inboxes', async () => {
    const inboxes = await Promise.all(
      ['one', 'two', 'three'].map(
        async (name) =>
          (
            await request(ctx.app)
              .post('/v1/inboxes')
              .send({ name, email_username: `mg-race-${name}-${randomUUID().slice(0, 8)}` })
          ).body as { id: string; email_address: string },
      ),
    );
    const recipient = inboxes.map((inbox) => inbox.email_address).join(', ');
    const signed = signature();
    const genuine = { ...routeFields('Race genuine'), recipient, ...signed };
    const forged = { ...routeFields('Race forged'), recipient, ...signed };
    const [first, second] = await Promise.all([post(genuine), post(forged)]);
    // Whichever claims the token first is stored in every inbox; the other, in none.
    expect([first.status, second.status].sort()).toEqual([200, 401]);
    const [storedSubject, refusedSubject] =
      first.status === 200 ? ['Race genuine', 'Race forged'] : ['Race forged', 'Race genuine'];
    const subjects = async (subject: string) =>
      ctx.db.message.count({ where: { subject, inboxId: { in: inboxes.map((inbox) => inbox.id) } } });
    expect({ stored: await subjects(storedSubject), refused: await subjects(refusedSubject) }).toEqual({ stored: 3, refused: 0 });
    expect((await post(genuine)).status).toBe(401);
  });

  it('refuses a token too long to be Mailgun’s with 401, even signed', async () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = 'a'.repeat(4096);
    const res = await post({
      ...routeFields('Long token'),
      timestamp,
      token,
      signature: createHmac('sha256', SIGNING_KEY)
        .update(timestamp + token)
        .digest('hex'),
    });
    expect({ status: res.status, message: res.body.error.message }).toEqual({
      status: 401,
      message: 'The Mailgun token is not 1 to 256 printable ASCII characters',
    });
  });
});

describe('requestDigest', () => {
  const body = (fields: [string, string][], files: WebhookBody['files'] = []): WebhookBody => ({
    fields: new Map(fields.map(([name, value]) => [name, Buffer.from(value)])),
    files,
  });

  it('is the same for the same fields in another order, and differs when a value or file changes', async () => {
    const fields: [string, string][] = [
      ['subject', 'Hi'],
      ['body-plain', 'x'.repeat(3 * 1024 * 1024)],
    ];
    const file = { field: 'attachment-1', filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('abc') };
    const digest = await requestDigest(body(fields, [file]));
    expect(await requestDigest(body([...fields].reverse(), [file]))).toBe(digest);
    expect(await requestDigest(body([['subject', 'Hi!'], fields[1]!], [file]))).not.toBe(digest);
    expect(await requestDigest(body(fields, [{ ...file, content: Buffer.from('abd') }]))).not.toBe(digest);
    expect(await requestDigest(body(fields))).not.toBe(digest);
  });

  it('tells where one value ends and the next begins', async () => {
    expect(await requestDigest(body([['a', 'bc']]))).not.toBe(await requestDigest(body([['ab', 'c']])));
  });
});
