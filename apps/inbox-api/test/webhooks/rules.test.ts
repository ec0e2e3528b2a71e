import { createHmac, X509Certificate } from 'node:crypto';
import { decodeText } from '../../src/webhooks/body.js';
import { filenameText, parseMail } from '../../src/webhooks/mime.js';
import { certificateNamesSns, isSnsUrl, snsEndpointOf, stringToSign, timestampProblem } from '../../src/webhooks/sns.js';
import { authenticationOf, judge, sendgridDkim } from '../../src/webhooks/verdicts.js';
import { checkMailgunSignature, checkSendgridSecret, sameSecret } from '../../src/webhooks/verify.js';
import { signingCertificate } from './helpers.js';

describe('judge: labels and drops from provider verdicts', () => {
  it.each([
    [{}, { store: true, labels: [] }],
    [
      { spf: 'pass', dkim: 'pass', dmarc: 'pass', spam: 'pass', virus: 'pass' },
      { store: true, labels: [] },
    ],
    [
      { virus: 'fail', spam: 'fail' },
      { store: false, labels: [] },
    ],
    [{ spam: 'fail' }, { store: true, labels: ['spam'] }],
    [{ spam: 'gray' }, { store: true, labels: [] }],
    [{ spamScore: 5 }, { store: true, labels: ['spam'] }],
    [{ spamScore: 4.9 }, { store: true, labels: [] }],
    [
      { dmarc: 'fail', spf: 'pass', dkim: 'pass' },
      { store: true, labels: ['unauthenticated'] },
    ],
    [
      { dmarc: 'pass', spf: 'fail', dkim: 'fail' },
      { store: true, labels: [] },
    ],
    [
      { spf: 'fail', dkim: 'fail' },
      { store: true, labels: ['unauthenticated'] },
    ],
    [{ spf: 'softfail' }, { store: true, labels: ['unauthenticated'] }],
    [
      { spf: 'fail', dkim: 'pass' },
      { store: true, labels: [] },
    ],
    [
      { spf: 'none', dkim: 'none' },
      { store: true, labels: [] },
    ],
    [
      { dmarc: 'gray', spf: 'fail' },
      { store: true, labels: ['unauthenticated'] },
    ],
    [
      { spam: 'fail', dmarc: 'fail' },
      { store: true, labels: ['spam', 'unauthenticated'] },
    ],
  ])('%j → %j', (verdicts, expected) => {
    expect(judge(verdicts)).toEqual(expected);
  });

  it('keeps the verdicts given, under their provider', () => {
    expect(authenticationOf('sendgrid', { spf: 'pass', dkim: undefined, spamScore: 1.5 })).toEqual({
      provider: 'sendgrid',
      spf: 'pass',
      spam_score: 1.5,
    });
  });

  it.each([
    ['{@gmail.com : pass}', 'pass'],
    ['{@a.com : fail, @b.com : pass}', 'pass'],
    ['{@a.com : fail}', 'fail'],
    ['none', 'none'],
    ['', undefined],
    [undefined, undefined],
  ])('reads SendGrid’s dkim field %j as %j', (field, expected) => {
    expect(sendgridDkim(field)).toBe(expected);
  });
});

describe('checkMailgunSignature', () => {
  const key = 'key-1';
  const now = new Date('2024-03-05T10:00:00Z');
  const sign = (timestamp: string, token: string) =>
    createHmac('sha256', key)
      .update(timestamp + token)
      .digest('hex');
  const at = (secondsAgo: number) => String(now.getTime() / 1000 - secondsAgo);

  it('accepts the HMAC-SHA256 of timestamp + token within 5 minutes', () => {
    expect(
      checkMailgunSignature({ timestamp: at(299), token: 'abc', signature: sign(at(299), 'abc') }, { signingKey: key, now }),
    ).toEqual({ valid: true });
    expect(
      checkMailgunSignature(
        { timestamp: at(0), token: 'abc', signature: sign(at(0), 'abc').toUpperCase() },
        { signingKey: key, now },
      ).valid,
    ).toBe(true);
  });

  it.each([
    ['stale', { timestamp: at(301), token: 'abc', signature: sign(at(301), 'abc') }, /window/],
    ['from the future', { timestamp: at(-301), token: 'abc', signature: sign(at(-301), 'abc') }, /window/],
    ['with another token', { timestamp: at(1), token: 'abd', signature: sign(at(1), 'abc') }, /does not match/],
    ['with a timestamp that is no number', { timestamp: '17e8', token: 'abc', signature: sign('17e8', 'abc') }, /not a number/],
    ['with a signature that is no hex', { timestamp: at(1), token: 'abc', signature: 'x'.repeat(64) }, /does not match/],
  ])('refuses a signature %s', (_case, signed, reason) => {
    const result = checkMailgunSignature(signed, { signingKey: key, now });
    expect(result.valid).toBe(false);
    expect(result.valid === false && result.reason).toMatch(reason);
  });
});

describe('checkSendgridSecret', () => {
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  it.each([
    [{ queryToken: 's3cret', authorization: undefined }, true],
    [{ queryToken: undefined, authorization: basic('any', 's3cret') }, true],
    [{ queryToken: undefined, authorization: basic('any', 's3cret:with-colon') }, false],
    [{ queryToken: 's3cre', authorization: undefined }, false],
    [{ queryToken: '', authorization: undefined }, false],
    [{ queryToken: undefined, authorization: 'Bearer s3cret' }, false],
    [{ queryToken: undefined, authorization: basic('s3cret', '') }, false],
    [{ queryToken: undefined, authorization: undefined }, false],
  ])('%j → %s', (request, expected) => {
    expect(checkSendgridSecret(request, 's3cret')).toBe(expected);
  });

  it('compares secrets of any length without throwing', () => {
    expect(sameSecret('a', 'a'.repeat(10_000))).toBe(false);
    expect(sameSecret('', '')).toBe(true);
  });
});

describe('stringToSign (SNS)', () => {
  it('lists the fields of a Notification in AWS’s order, leaving out an absent Subject', () => {
    const notification = {
      Type: 'Notification' as const,
      MessageId: 'm',
      TopicArn: 'arn:t',
      Message: 'hello\nworld',
      Timestamp: '2024-01-01T00:00:00.000Z',
      Subject: 'S',
      SignatureVersion: '1',
    };
    expect(stringToSign(notification)).toBe(
      'Message\nhello\nworld\nMessageId\nm\nSubject\nS\nTimestamp\n2024-01-01T00:00:00.000Z\nTopicArn\narn:t\nType\nNotification\n',
    );
    expect(stringToSign({ ...notification, Subject: undefined })).not.toContain('Subject');
  });

  it('signs SubscribeURL and Token of a subscription confirmation', () => {
    const confirmation = {
      Type: 'SubscriptionConfirmation' as const,
      MessageId: 'm',
      TopicArn: 't',
      Message: 'x',
      Timestamp: 'ts',
      Token: 'tok',
      SubscribeURL: 'https://u',
    };
    expect(stringToSign(confirmation)).toBe(
      'Message\nx\nMessageId\nm\nSubscribeURL\nhttps://u\nTimestamp\nts\nToken\ntok\nTopicArn\nt\nType\nSubscriptionConfirmation\n',
    );
  });
});

describe('the SNS endpoint of a topic', () => {
  it.each([
    ['arn:aws:sns:us-east-1:123456789012:inbound', { host: 'sns.us-east-1.amazonaws.com', domain: 'amazonaws.com' }],
    ['arn:aws-us-gov:sns:us-gov-west-1:123456789012:t', { host: 'sns.us-gov-west-1.amazonaws.com', domain: 'amazonaws.com' }],
    ['arn:aws-cn:sns:cn-northwest-1:123456789012:t', { host: 'sns.cn-northwest-1.amazonaws.com.cn', domain: 'amazonaws.com.cn' }],
    ['arn:aws:sns:s3:123456789012:t', undefined],
    ['arn:aws:sns:s3-us-west-2:123456789012:t', undefined],
    ['arn:aws:sqs:us-east-1:123456789012:t', undefined],
    ['arn:aws-iso:sns:us-iso-east-1:123456789012:t', undefined],
    ['arn:constructor:sns:us-east-1:123456789012:t', undefined],
    ['arn:__proto__:sns:us-east-1:123456789012:t', undefined],
    ['not an arn', undefined],
  ])('of %s is %j', (arn, endpoint) => {
    expect(snsEndpointOf(arn)).toEqual(endpoint);
  });
});

describe('isSnsUrl', () => {
  const topic = 'arn:aws:sns:us-east-1:123456789012:inbound';
  it.each([
    ['https://sns.us-east-1.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem', true],
    ['https://SNS.US-EAST-1.amazonaws.com/SimpleNotificationService-1.pem', true],
    // S3 buckets anyone may create, named like SNS (issue 22).
    ['https://sns.s3.amazonaws.com/SimpleNotificationService-1.pem', false],
    ['https://sns.s3-us-west-2.amazonaws.com/SimpleNotificationService-1.pem', false],
    ['https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem', false],
    ['https://sns.us-east-1.amazonaws.com.cn/SimpleNotificationService-1.pem', false],
    ['https://sns.us-east-1.amazonaws.com.evil.example/SimpleNotificationService-1.pem', false],
    ['http://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem', false],
    ['https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-1.pem', false],
    ['https://user@sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem', false],
    ['https://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.txt', false],
    ['https://sns.us-east-1.amazonaws.com/?x=.pem', false],
    ['not a url', false],
  ])('takes %s as a signing certificate: %s', (url, trusted) => {
    expect(isSnsUrl(url, topic, 'certificate')).toBe(trusted);
  });

  it('takes links (SubscribeURL, UnsubscribeURL) of any path on the same endpoint only', () => {
    const link = 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=t';
    expect(isSnsUrl(link, topic, 'link')).toBe(true);
    expect(isSnsUrl(link, 'arn:aws:sns:eu-west-1:123456789012:inbound', 'link')).toBe(false);
    expect(isSnsUrl('https://sns.s3.amazonaws.com/?Action=ConfirmSubscription', topic, 'link')).toBe(false);
    expect(isSnsUrl('https://sns.cn-north-1.amazonaws.com.cn/?Action=Unsubscribe', 'arn:aws-cn:sns:cn-north-1:1:t', 'link')).toBe(
      true,
    );
  });
});

describe('certificateNamesSns', () => {
  const certificate = (names: Parameters<typeof signingCertificate>[0]) =>
    new X509Certificate(signingCertificate(names).certificate);
  const topic = 'arn:aws:sns:us-east-1:123456789012:inbound';

  it.each([
    ['CN=sns.amazonaws.com, as AWS’s certificates', { subject: '/CN=sns.amazonaws.com' }, true],
    ['the DNS name sns.amazonaws.com', { subject: '/O=Amazon', dnsNames: ['sns.amazonaws.com'] }, true],
    ['the endpoint of the region', { subject: '/CN=sns.us-east-1.amazonaws.com' }, true],
    ['another name', { subject: '/CN=attacker.example' }, false],
    ['an S3 host', { subject: '/CN=sns.s3.amazonaws.com' }, false],
    ['a wildcard', { subject: '/CN=*.amazonaws.com' }, false],
    [
      'DNS names without SNS, whatever the common name',
      { subject: '/CN=sns.amazonaws.com', dnsNames: ['sns.s3.amazonaws.com'] },
      false,
    ],
  ])('takes a certificate with %s: %s', (_case, names, expected) => {
    expect(certificateNamesSns(certificate(names), topic)).toBe(expected);
  });

  it('expects the China partition’s names for a topic there', () => {
    const china = 'arn:aws-cn:sns:cn-north-1:123456789012:inbound';
    expect(certificateNamesSns(certificate({ subject: '/CN=sns.cn-north-1.amazonaws.com.cn' }), china)).toBe(true);
    expect(certificateNamesSns(certificate({ subject: '/CN=sns.amazonaws.com' }), china)).toBe(false);
  });
});

describe('timestampProblem (SNS)', () => {
  const now = new Date('2026-11-25T12:00:00.000Z');
  it.each([
    ['2026-11-25T12:00:00.000Z', undefined],
    ['2026-11-25T11:00:00.000Z', undefined],
    ['2026-11-25T10:59:59.999Z', 'The SNS message is older than one hour'],
    ['2022-01-13T21:02:46.911Z', 'The SNS message is older than one hour'],
    ['2026-11-25T12:05:00.000Z', undefined],
    ['2026-11-25T12:05:00.001Z', 'The SNS message is dated in the future'],
    ['yesterday', 'The SNS message has no valid Timestamp'],
  ])('%s: %s', (timestamp, problem) => {
    expect(timestampProblem(timestamp, now)).toBe(problem);
  });
});

describe('filenameText', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    [`${'n'.repeat(300)}.txt`, `${'n'.repeat(251)}.txt`],
    ['n'.repeat(300), 'n'.repeat(255)],
    // An ending too long to be an extension is cut like the rest.
    [`a.${'x'.repeat(300)}`, `a.${'x'.repeat(253)}`],
    // Never half of a surrogate pair: the emoji at the cut goes whole.
    [`${'n'.repeat(250)}😀😀.txt`, `${'n'.repeat(250)}.txt`],
    ['line\r\nbreak.txt', 'line break.txt'],
  ])('stores %j as %j', (raw, stored) => {
    expect(filenameText(raw)).toBe(stored);
    expect(filenameText(raw).length).toBeLessThanOrEqual(255);
  });
});

describe('parseMail: charsets', () => {
  const mail = (charset: string, body: Buffer): Buffer =>
    Buffer.concat([
      Buffer.from(
        `From: a@example.com\r\nTo: b@example.com\r\nSubject: =?${charset}?B?${body.toString('base64')}?=\r\n` +
          `Content-Type: text/plain; charset="${charset}"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`,
      ),
      body,
    ]);

  it.each([
    // Labels no decoder knows (Mutt writes `unknown-8bit`): UTF-8 when the bytes are UTF-8 ...
    ['unknown-8bit', Buffer.from('Grüße ☃', 'utf8'), 'Grüße ☃'],
    ['x-no-such-charset', Buffer.from('Grüße ☃', 'utf8'), 'Grüße ☃'],
    // ... and windows-1252 when they are not.
    ['unknown-8bit', Buffer.from('4772fcdf65208063', 'hex'), 'Grüße €c'],
    // A known label is believed, whatever the bytes.
    ['iso-8859-1', Buffer.from('Grüße', 'utf8'), 'GrÃ¼ÃŸe'],
    ['koi8-r', Buffer.from('f0d2c9d7c5d4', 'hex'), 'Привет'],
  ])('reads a body and subject labelled %s, bytes %s, as %j', async (charset, bytes, text) => {
    const parsed = await parseMail(mail(charset, bytes));
    expect(parsed.text).toBe(`${text}\n`);
    expect(parsed.subject).toBe(text);
    // SendGrid's parsed fields, in the charset its `charsets` field names, are read the same way.
    expect(decodeText(bytes, charset)).toBe(text);
  });
});
