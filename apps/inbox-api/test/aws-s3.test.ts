import { isBucketName, isObjectKey, s3ObjectUrl } from '../src/adapters/aws/s3.js';

describe('isBucketName (S3’s naming rules)', () => {
  it.each(['mail', 'inbound-mail-2024', 'my.mail.bucket', 'a1b', 'x'.repeat(63)])('takes %s', (name) => {
    expect(isBucketName(name)).toBe(true);
  });

  it.each([
    ['the hostile name of issue 22', '127.0.0.1:41011/steal?'],
    ['too short', 'ab'],
    ['too long', 'x'.repeat(64)],
    ['upper case', 'Mail'],
    ['an underscore', 'my_mail'],
    ['a dot at the end', 'mail.'],
    ['a hyphen first', '-mail'],
    ['two dots in a row', 'my..mail'],
    ['an IP address', '192.168.5.4'],
    ['a reserved prefix', 'xn--mail'],
    ['another reserved prefix', 'sthree-mail'],
    ['a reserved suffix', 'mail-s3alias'],
    ['another reserved suffix', 'mail--ol-s3'],
    ['a host and path', 'evil.example/x'],
    ['a user', 'user@evil.example'],
    ['nothing', ''],
  ])('refuses %s: %j', (_case, name) => {
    expect(isBucketName(name)).toBe(false);
  });
});

describe('isObjectKey', () => {
  it.each(['emails/objectkey123', '/emails/objectkey123', 'a//b', 'Übersicht März.eml', '.hidden', 'a/..b/c', 'k'.repeat(1024)])(
    'takes %j',
    (key) => {
      expect(isObjectKey(key)).toBe(true);
    },
  );

  it.each([
    ['nothing', ''],
    ['more than 1,024 bytes', 'é'.repeat(513)],
    ['a parent segment', '../other-bucket/secret'],
    ['a parent segment inside', 'emails/../../other-bucket/secret'],
    ['a current segment', 'emails/./x'],
    ['a control character', 'emails/x\r\nHost: evil'],
    ['broken UTF-16', 'emails/\ud800'],
  ])('refuses %s', (_case, key) => {
    expect(isObjectKey(key)).toBe(false);
  });
});

describe('s3ObjectUrl', () => {
  const aws = { region: 'eu-west-1' };
  it.each([
    [aws, 'mail', 'emails/a b+c.eml', 'https://mail.s3.eu-west-1.amazonaws.com/emails/a%20b%2Bc.eml'],
    // AWS's wildcard certificate covers one label: a bucket with dots goes in the path.
    [aws, 'my.mail', 'x', 'https://s3.eu-west-1.amazonaws.com/my.mail/x'],
    [{ ...aws, endpoint: 'http://127.0.0.1:9000/' }, 'mail', '/emails/x?y#z', 'http://127.0.0.1:9000/mail//emails/x%3Fy%23z'],
  ])('addresses %j %s %j as %s', (location, bucket, key, url) => {
    expect(s3ObjectUrl(location, { bucket, key })).toBe(url);
  });
});
