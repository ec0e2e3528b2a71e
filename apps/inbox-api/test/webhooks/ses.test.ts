import request from 'supertest';
import { readAttachment } from '../../src/messages/attachments.js';
import { signAwsRequest } from '../../src/adapters/aws/sigv4.js';
import { createTestContext, type TestContext } from '../context.js';
import { startProvider } from '../mail/helpers.js';
import {
  fixture,
  mimeMessage,
  postSns,
  sesFixtureFor,
  sesNotification,
  signingCertificate,
  signSns,
  startListener,
} from './helpers.js';

let ctx: TestContext;
let inbox: { id: string; email_address: string };

beforeAll(async () => {
  ctx = await createTestContext();
  inbox = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Relay', email_username: 'relay' })).body;
});
afterAll(() => ctx.close());

const messagesOf = async (inboxId: string) =>
  (await request(ctx.app).get(`/v1/messages?inbox_id=${inboxId}&limit=200`)).body.items as Record<string, unknown>[];

describe('POST /webhooks/ses: SES receipts through SNS', () => {
  it.each([
    'single_recipient_email_sns_body.json',
    'single_recipient_list_email_sns_body.json',
    'domain_recipient_email_sns_body.json',
    'replies_email_sns_body.json',
  ])('stores %s, answering 200 after the commit, and stores a redelivery once', async (name) => {
    const target = (
      await request(ctx.app)
        .post('/v1/inboxes')
        .send({ name, email_username: `${name.split('_')[0]!}${name.length}` })
    ).body;
    const envelope = sesFixtureFor(name, target.email_address);
    const res = await postSns(ctx.app, envelope);
    expect(res.status).toBe(200);
    expect(res.body.messages).toEqual([expect.objectContaining({ inbox_id: target.id, duplicate: false })]);

    const [message] = await messagesOf(target.id);
    expect(message).toMatchObject({
      id: res.body.messages[0].message_id,
      direction: 'inbound',
      from_address: 'fxastage@protonmail.com',
      to_addresses: [target.email_address],
      subject: 'localized email header + footer',
      provider_message_id:
        '<YQcRqVkgRtVPMmRcONFiK_YqawljgCRUfkTRngwYYI7lSsiE1IKax6R15p9gdSmKgSEXepeJTGhiwsTIJ-fWLA-Tc_lTb2BJdqAB0da4kx4=@protonmail.com>',
      labels: ['received', 'unread'],
      metadata: { authentication: { provider: 'ses', spam: 'pass', virus: 'pass', spf: 'pass', dkim: 'pass', dmarc: 'pass' } },
      timestamp: '2022-01-13T21:02:43.000Z',
    });
    expect(message!.content_clean).toMatch(/^should work/);

    const again = await postSns(ctx.app, envelope);
    expect(again.status).toBe(200);
    expect(again.body.messages).toEqual([expect.objectContaining({ message_id: message!.id, duplicate: true })]);
    expect(await messagesOf(target.id)).toHaveLength(1);
  });

  it('labels mail SES judged spam, and keeps the verdicts in metadata', async () => {
    const target = (await request(ctx.app).post('/v1/inboxes').send({ name: 'Spam', email_username: 'spam-target' })).body;
    const res = await postSns(ctx.app, sesFixtureFor('spamVerdict_FAIL_email_sns_body.json', target.email_address));
    expect(res.status).toBe(200);
    const [message] = await messagesOf(target.id);
    expect(message).toMatchObject({ labels: ['received', 'unread', 'spam'], metadata: { authentication: { spam: 'fail' } } });
  });

  it('labels mail that fails DMARC unauthenticated, and drops mail with a virus without storing it', async () => {
    const raw = mimeMessage({
      to: inbox.email_address,
      subject: 'Verdicts',
      body: 'Check me',
      messageId: '<verdicts-1@example.com>',
    });
    const dmarc = sesNotification(raw, {
      recipients: [inbox.email_address],
      receipt: { dmarcVerdict: { status: 'FAIL' }, spfVerdict: { status: 'FAIL' } },
    });
    expect((await postSns(ctx.app, dmarc)).status).toBe(200);
    const stored = (await messagesOf(inbox.id)).find((message) => message.subject === 'Verdicts');
    expect(stored).toMatchObject({
      labels: ['received', 'unread', 'unauthenticated'],
      metadata: { authentication: { dmarc: 'fail', spf: 'fail' } },
    });

    const infected = mimeMessage({ to: inbox.email_address, subject: 'Infected', body: 'x', messageId: '<virus-1@example.com>' });
    const virus = await postSns(
      ctx.app,
      sesNotification(infected, { recipients: [inbox.email_address], receipt: { virusVerdict: { status: 'FAIL' } } }),
    );
    expect(virus.status).toBe(200);
    expect(virus.body).toEqual({ messages: [], unrouted: [], dropped: 'virus' });
    expect((await messagesOf(inbox.id)).some((message) => message.subject === 'Infected')).toBe(false);
    const metrics = (await request(ctx.app).get('/metrics')).text;
    expect(metrics).toMatch(/inbox_inbound_messages_total\{[^}]*provider="ses"[^}]*outcome="virus"[^}]*\} 1/);
  });

  it('reads content in BASE64 encoding, with attachments byte for byte, inline images kept as inline', async () => {
    const raw = fixture('inbound/ses-sns/inline_image_incoming.email');
    const res = await postSns(ctx.app, sesNotification(raw, { recipients: [inbox.email_address], encoding: 'BASE64' }));
    expect(res.status).toBe(200);
    const messageId = res.body.messages[0].message_id;
    const message = (await request(ctx.app).get(`/v1/messages/${messageId}`)).body;
    expect(message).toMatchObject({ subject: 'Test Email', from_address: 'friend@mail.example.com' });
    const attachments = await ctx.db.attachment.findMany({ where: { messageId } });
    expect(attachments).toEqual([
      expect.objectContaining({ filename: 'clock-purple.png', contentType: 'image/png', disposition: 'inline', size: 596 }),
    ]);
    const png = await readAttachment(ctx.deps.storage, attachments[0]!);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  });

  it.each([
    [
      'emperor_norton_incoming.email',
      { from_address: 'norton@sf.us.example.com', subject: 'Declaration and Meeting of the Union' },
    ],
    [
      'nested_brackets_service_incoming.email',
      { from_address: 'hello@theservice.example.com', subject: 'Welcome to our service!' },
    ],
    ['encoded_trailing_newline_incoming.email', { from_address: 'newline@trouble.example.com', subject: 'An encoded newline' }],
    [
      'duplicate_mime_version_incoming.email',
      { from_address: 'root@server.example.com', subject: 'Duplicate MIME-Version Email' },
    ],
    ['message_id_in_brackets_incoming.email', { from_address: 'user@clownshoes.example.com', subject: 'Message-ID in brackets' }],
    ['plain_text_incoming.email', { from_address: 'root@server.example.com', subject: 'Text-Only Email' }],
    [
      'russian_spam_incoming.email',
      { from_address: 'hello@ac.spam.example.com', subject: 'Приглашение  | Зачем и как вести бизнес в Африке?' },
    ],
  ])('reads the awkward message %s', async (name, expected) => {
    const target = (
      await request(ctx.app)
        .post('/v1/inboxes')
        .send({ name, email_username: name.replace(/[^a-z]/g, '').slice(0, 30) })
    ).body;
    const raw = fixture(`inbound/ses-sns/${name}`).toString('latin1').replaceAll('ebsbdsan7@test.com', target.email_address);
    const res = await postSns(
      ctx.app,
      sesNotification(Buffer.from(raw, 'latin1'), { recipients: [target.email_address], encoding: 'BASE64' }),
    );
    expect(res.status).toBe(200);
    const [message] = await messagesOf(target.id);
    expect(message).toMatchObject(expected);
    expect(String(message!.content_clean).length).toBeGreaterThan(10);
  });

  it('answers 200 for mail to no inbox of ours, and counts the recipients of our domain', async () => {
    const raw = mimeMessage({ to: `nobody@${inbox.email_address.split('@')[1]}`, subject: 'Lost', body: 'x' });
    const res = await postSns(
      ctx.app,
      sesNotification(raw, { recipients: [`nobody@${inbox.email_address.split('@')[1]}`, 'other@elsewhere.example'] }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ messages: [], unrouted: [`nobody@${inbox.email_address.split('@')[1]}`], dropped: 'no_inbox' });
    expect((await request(ctx.app).get('/metrics')).text).toMatch(
      /inbox_inbound_messages_total\{[^}]*outcome="unrouted"[^}]*\} [1-9]/,
    );
  });

  it('answers a bounce of mail it did not send with 200, storing nothing (delivery-ses.test.ts has the rest)', async () => {
    const res = await postSns(ctx.app, JSON.parse(fixture('inbound/ses-sns/hard_bounce_sns_body.json').toString('utf8')));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { events: 1, matched: 0, updated: 0 } });
  });

  it.each([
    ['not JSON', 'text/plain', 'hello'],
    ['JSON that is no SNS message', 'text/plain', JSON.stringify({ hello: 'world' })],
    [
      'an SNS message whose Message is not SES',
      'text/plain',
      JSON.stringify({ ...sesNotification('x', { recipients: [] }), Message: 'not json' }),
    ],
    [
      'a receipt with no content and no S3 location',
      'text/plain',
      JSON.stringify({
        ...sesNotification('x', { recipients: [] }),
        Message: JSON.stringify({ notificationType: 'Received', receipt: { action: { type: 'SNS' } } }),
      }),
    ],
    [
      'content that is no mail',
      'text/plain',
      JSON.stringify(sesNotification('\u0000\u0001 just bytes', { recipients: ['relay@inbox.test'] })),
    ],
  ])('answers 400 for %s, storing nothing', async (_case, type, body) => {
    const before = await ctx.db.message.count();
    const res = await request(ctx.app).post('/webhooks/ses').set('content-type', type).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    expect(await ctx.db.message.count()).toBe(before);
  });

  it('answers 415 for a body of another type', async () => {
    const res = await request(ctx.app).post('/webhooks/ses').set('content-type', 'application/xml').send('<x/>');
    expect(res.status).toBe(415);
  });
});

describe('SES mail stored in S3 (receipts without content)', () => {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

  /** A replica reading S3-stored mail from a loopback S3 that answers with `answer`; both closed after `use`. */
  async function withLoopbackS3(
    answer: Parameters<typeof startProvider>[0],
    use: (viaS3: TestContext, s3: Awaited<ReturnType<typeof startProvider>>) => Promise<void>,
    env: Record<string, string> = {},
  ): Promise<void> {
    const s3 = await startProvider(answer);
    const viaS3 = await ctx.replica({
      SES_S3_REGION: 'us-east-1',
      SES_S3_ACCESS_KEY_ID: credentials.accessKeyId,
      SES_S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      SES_S3_ENDPOINT: s3.url,
      ...env,
    });
    try {
      await use(viaS3, s3);
    } finally {
      await viaS3.close();
      await s3.close();
    }
  }

  it('is fetched from the bucket and key of the receipt with a SigV4-signed GetObject', async () => {
    const raw = mimeMessage({
      to: 'relay@inbox.test',
      subject: 'Large mail via S3',
      body: 'Stored in S3',
      messageId: '<s3-1@example.com>',
    });
    const answer = (req: { path: string }) => ({
      status: req.path === '/test-bucket//emails/objectkey123' ? 200 : 404,
      body: raw,
    });
    await withLoopbackS3(answer, async (viaS3, s3) => {
      const envelope = sesFixtureFor('s3_stored_email_sns_body.json', inbox.email_address);
      const res = await postSns(viaS3.app, envelope);
      expect(res.status).toBe(200);
      expect((await request(ctx.app).get(`/v1/messages/${res.body.messages[0].message_id}`)).body).toMatchObject({
        subject: 'Large mail via S3',
        content_clean: 'Stored in S3',
      });

      // The signature is AWS's SigV4 over exactly this request.
      const [get] = s3.requests;
      expect(get).toMatchObject({ method: 'GET', path: '/test-bucket//emails/objectkey123' });
      const expected = signAwsRequest(
        {
          method: 'GET',
          url: `${s3.url}/test-bucket//emails/objectkey123`,
          headers: { 'x-amz-content-sha256': get!.headers['x-amz-content-sha256'] as string },
          body: '',
        },
        {
          credentials,
          region: 'us-east-1',
          service: 's3',
          now: new Date(
            String(get!.headers['x-amz-date']).replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
          ),
        },
      );
      expect(get!.headers.authorization).toBe(expected.authorization);
      expect(get!.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
      );
      expect(get!.headers['x-amz-content-sha256']).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    });
  });

  it('answers 502 (so that SNS retries) when S3 refuses, and when S3 is not configured', async () => {
    await withLoopbackS3(
      () => ({ status: 403, body: '<Error><Code>AccessDenied</Code></Error>' }),
      async (viaS3) => {
        const envelope = sesFixtureFor('s3_stored_email_sns_body.json', inbox.email_address);
        const refused = await postSns(viaS3.app, envelope);
        expect(refused.status).toBe(502);
        expect(refused.body.error.message).toBe('Amazon S3 answered 403 AccessDenied for the stored mail');
        const unconfigured = await postSns(ctx.app, envelope);
        expect(unconfigured.status).toBe(502);
        expect(unconfigured.body.error.message).toMatch(/SES_S3_/);
      },
    );
  });

  it('refuses (413) a stored mail larger than a raw mail posted to the webhook may be, holding none of it', async () => {
    // INBOX_MAX_ATTACHMENT_BYTES 3 bytes: a raw mail may be 4 bytes of base64 and 5 MiB besides.
    const limit = 4 + 5 * 1024 * 1024;
    await withLoopbackS3(
      () => ({ status: 200, body: `From: a@b\r\n\r\n${'x'.repeat(limit)}` }),
      async (viaS3) => {
        const res = await postSns(viaS3.app, sesFixtureFor('s3_stored_email_sns_body.json', inbox.email_address));
        expect({ status: res.status, error: res.body.error }).toEqual({
          status: 413,
          error: {
            code: 'payload_too_large',
            message: `The stored mail is larger than the limit of ${limit} bytes`,
            details: { limit_bytes: limit },
          },
        });
      },
      { INBOX_MAX_ATTACHMENT_BYTES: '3' },
    );
  });

  /** An S3 receipt of `bucketName` and `objectKey`, for the agent. */
  const s3Receipt = (bucketName: string, objectKey: string) => {
    const envelope = sesFixtureFor('s3_stored_email_sns_body.json', inbox.email_address);
    const notification = JSON.parse(envelope.Message) as { receipt: { action: Record<string, string> } };
    notification.receipt.action = { ...notification.receipt.action, bucketName, objectKey };
    return { ...envelope, Message: JSON.stringify(notification) };
  };

  it('refuses a bucket name that is no bucket (400) without connecting anywhere: the SSRF of issue 22', async () => {
    const listener = await startListener();
    // AWS-style addressing, the bucket in the host name.
    const viaAws = await ctx.replica({ SES_S3_REGION: 'us-east-1', SES_S3_ACCESS_KEY_ID: 'a', SES_S3_SECRET_ACCESS_KEY: 'b' });
    try {
      for (const bucket of [`127.0.0.1:${listener.port}/steal?`, `127.0.0.1:${listener.port}#`, `x@127.0.0.1:${listener.port}`]) {
        const res = await postSns(viaAws.app, s3Receipt(bucket, 'emails/x'));
        expect({ bucket, status: res.status, code: res.body.error.code }).toEqual({ bucket, status: 400, code: 'bad_request' });
      }
      // Refused as such also where no S3 is configured (not a 502 that SNS would retry).
      const unconfigured = await postSns(ctx.app, s3Receipt(`127.0.0.1:${listener.port}/steal?`, 'emails/x'));
      expect(unconfigured.status).toBe(400);
      expect(listener.connections()).toBe(0);
    } finally {
      await viaAws.close();
      await listener.close();
    }
  });

  it('refuses object keys that would name another object or bucket (400), asking S3 nothing', async () => {
    await withLoopbackS3(
      () => ({ status: 200, body: 'From: a@b\r\n\r\nx' }),
      async (viaS3, s3) => {
        for (const key of ['../other-bucket/secret', 'emails/../../other-bucket/secret', 'emails/\r\nx', '']) {
          const res = await postSns(viaS3.app, s3Receipt('test-bucket', key));
          expect({ key, status: res.status }).toEqual({ key, status: 400 });
        }
        expect(s3.requests).toEqual([]);
      },
    );
  });
});

describe('SNS signatures (SES_SNS_TOPIC_ARNS set)', () => {
  const topic = 'arn:aws:sns:us-east-1:123456789012:inbound';
  const { certificate, privateKey } = signingCertificate();
  let certServer: Awaited<ReturnType<typeof startProvider>>;
  let signed: TestContext;

  // Signed with a certificate of another name, served where the test's SNS serves its own.
  const misnamed = signingCertificate({ subject: '/CN=sns.s3.amazonaws.com' });

  beforeAll(async () => {
    certServer = await startProvider((req) =>
      req.path === '/cert.pem'
        ? { status: 200, body: certificate }
        : req.path === '/misnamed.pem'
          ? { status: 200, body: misnamed.certificate }
          : { status: 200, body: '<ConfirmSubscriptionResponse/>' },
    );
    signed = await ctx.replica({
      SES_SNS_TOPIC_ARNS: `${topic},arn:aws:sns:eu-west-1:123456789012:other`,
      TEST_SNS_URL_PREFIX: certServer.url,
    });
  });
  afterAll(async () => {
    await signed.close();
    await certServer.close();
  });

  const notification = (subject: string) =>
    sesNotification(mimeMessage({ to: inbox.email_address, subject, body: 'Signed', messageId: `<${subject}@example.com>` }), {
      recipients: [inbox.email_address],
    });

  it.each(['1', '2'] as const)('accepts SignatureVersion %s, fetching the certificate once', async (version) => {
    const before = certServer.requests.filter((req) => req.path === '/cert.pem').length;
    for (const subject of [`signed-v${version}-a`, `signed-v${version}-b`]) {
      const res = await postSns(
        signed.app,
        signSns(notification(subject), { privateKey, certUrl: `${certServer.url}/cert.pem`, version }),
      );
      expect(res.status).toBe(200);
      expect(res.body.messages).toHaveLength(1);
    }
    expect(certServer.requests.filter((req) => req.path === '/cert.pem').length - before).toBeLessThanOrEqual(1);
  });

  it('refuses a forged or altered message with 401, storing nothing', async () => {
    const good = signSns(notification('forged'), { privateKey, certUrl: `${certServer.url}/cert.pem`, version: '2' });
    const altered = { ...good, Message: good.Message.replace('Signed', 'Altered') };
    const unsigned = { ...notification('unsigned') };
    const otherKey = signingCertificate().privateKey;
    const forged = signSns(notification('forged-key'), {
      privateKey: otherKey,
      certUrl: `${certServer.url}/cert.pem`,
      version: '2',
    });
    for (const envelope of [altered, unsigned, forged]) {
      const res = await postSns(signed.app, envelope);
      expect(res.status).toBe(401);
    }
    expect(await ctx.db.message.count({ where: { subject: { in: ['forged', 'unsigned', 'forged-key'] } } })).toBe(0);
  });

  it('refuses, fetching nothing, a certificate URL off the SNS endpoint of the topic’s region, and topics not configured', async () => {
    for (const certUrl of [
      // S3 buckets anyone may own, which the host check took for SNS (issue 22).
      'https://sns.s3.amazonaws.com/SimpleNotificationService-1.pem',
      'https://sns.s3-us-west-2.amazonaws.com/SimpleNotificationService-1.pem',
      'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.txt',
      'https://sns.us-east-1.amazonaws.com.evil.example/cert.pem',
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      'https://example.com/cert.pem',
    ]) {
      const res = await postSns(signed.app, signSns(notification('bad-cert-url'), { privateKey, certUrl, version: '1' }));
      // 401 before any fetch: a fetch that failed would be 502.
      expect({ certUrl, status: res.status, message: res.body.error.message }).toEqual({
        certUrl,
        status: 401,
        message: "The SNS signing certificate is not on the SNS endpoint of the topic's region",
      });
    }
    const otherTopic = { ...notification('other-topic'), TopicArn: 'arn:aws:sns:us-east-1:999999999999:someone-elses' };
    const res = await postSns(
      signed.app,
      signSns(otherTopic, { privateKey, certUrl: `${certServer.url}/cert.pem`, version: '2' }),
    );
    expect(res.status).toBe(403);
  });

  it('refuses a certificate that does not name SNS, however it is served', async () => {
    const res = await postSns(
      signed.app,
      signSns(notification('misnamed-cert'), {
        privateKey: misnamed.privateKey,
        certUrl: `${certServer.url}/misnamed.pem`,
        version: '2',
      }),
    );
    expect({ status: res.status, message: res.body.error.message }).toEqual({
      status: 401,
      message: 'The SNS signing certificate does not name Amazon SNS',
    });
  });

  it('refuses a signed message older than an hour, or dated ahead of the clock: a captured one is not replayed', async () => {
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    const cases = [
      ['61 minutes old', at(-61 * 60_000), 401, 'The SNS message is older than one hour'],
      ['10 minutes ahead', at(10 * 60_000), 401, 'The SNS message is dated in the future'],
      ['59 minutes old', at(-59 * 60_000), 200, undefined],
    ] as const;
    for (const [age, timestamp, status, message] of cases) {
      const envelope = { ...notification(`aged-${age.replace(/\W/g, '-')}`), Timestamp: timestamp };
      const res = await postSns(
        signed.app,
        signSns(envelope, { privateKey, certUrl: `${certServer.url}/cert.pem`, version: '2' }),
      );
      expect({ age, status: res.status, message: res.body.error?.message }).toEqual({ age, status, message });
    }
  });

  it('refuses an UnsubscribeURL off the SNS endpoint of the topic’s region', async () => {
    const envelope = { ...notification('odd-unsubscribe'), UnsubscribeURL: 'https://sns.s3.amazonaws.com/?Action=Unsubscribe' };
    const res = await postSns(signed.app, signSns(envelope, { privateKey, certUrl: `${certServer.url}/cert.pem`, version: '2' }));
    expect(res.status).toBe(401);
  });

  it('confirms a subscription by fetching its SubscribeURL, only on a trusted host', async () => {
    const confirmation = {
      Type: 'SubscriptionConfirmation' as const,
      MessageId: 'c-1',
      Token: 'token-1',
      TopicArn: topic,
      Message: 'You have chosen to subscribe',
      SubscribeURL: `${certServer.url}/?Action=ConfirmSubscription&Token=token-1`,
      Timestamp: new Date().toISOString(),
    };
    const res = await postSns(
      signed.app,
      signSns(confirmation, { privateKey, certUrl: `${certServer.url}/cert.pem`, version: '1' }),
    );
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { confirmed: topic } });
    expect(certServer.requests.some((req) => req.path === '/?Action=ConfirmSubscription&Token=token-1')).toBe(true);

    for (const url of [
      'https://attacker.example/confirm',
      'https://sns.s3.amazonaws.com/?Action=ConfirmSubscription',
      'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription',
    ]) {
      const elsewhere = { ...confirmation, SubscribeURL: url };
      const refused = await postSns(
        signed.app,
        signSns(elsewhere, { privateKey, certUrl: `${certServer.url}/cert.pem`, version: '1' }),
      );
      expect({ url, status: refused.status }).toEqual({ url, status: 403 });
    }
  });

  it('fetches no SubscribeURL off the SNS endpoint unsigned either', async () => {
    const listener = await startListener();
    try {
      const confirmation = {
        Type: 'SubscriptionConfirmation',
        MessageId: 'c-2',
        Token: 'token-2',
        TopicArn: topic,
        Message: 'You have chosen to subscribe',
        SubscribeURL: `https://127.0.0.1:${listener.port}/?Action=ConfirmSubscription`,
        Timestamp: new Date().toISOString(),
      };
      expect((await postSns(ctx.app, confirmation)).status).toBe(403);
      expect(listener.connections()).toBe(0);
    } finally {
      await listener.close();
    }
  });

  it('refuses the fixture subscription of a topic not configured, and logs an unsubscribe with 200', async () => {
    const fixtureConfirmation = JSON.parse(
      fixture('inbound/ses-sns/subscription_confirmation_invalid_sns_body.json').toString('utf8'),
    );
    expect((await postSns(signed.app, fixtureConfirmation)).status).toBe(403);
    // Unsigned mode fetches its SubscribeURL (an SNS host of AWS): it cannot be confirmed from here (no
    // such network, or AWS refuses the fixture's stale token), which is a 502 so that SNS tries again.
    const unsigned = await postSns(ctx.app, fixtureConfirmation);
    expect(unsigned.status).toBe(502);
    expect(unsigned.body.error.message).toBe('The SNS subscription could not be confirmed');
    const unsubscribe = {
      Type: 'UnsubscribeConfirmation',
      MessageId: 'u-1',
      TopicArn: topic,
      Message: 'unsubscribed',
      Timestamp: new Date().toISOString(),
      Token: 't',
    };
    expect((await postSns(ctx.app, unsubscribe)).body).toEqual({ unsubscribed: topic });
  });
});
