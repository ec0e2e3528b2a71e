import { createHmac } from 'node:crypto';
import { stringToSign } from '../../src/webhooks/sns.js';
import { authenticationOf, judge, sendgridDkim } from '../../src/webhooks/verdicts.js';
import { checkMailgunSignature, checkSendgridSecret, sameSecret } from '../../src/webhooks/verify.js';

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
