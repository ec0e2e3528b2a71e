import { signAwsRequest } from '../src/adapters/aws/sigv4.js';

// AWS's Signature Version 4 test suite: its example credentials, service and moment.
const suite = {
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  region: 'us-east-1',
  service: 'service',
  now: new Date('2015-08-30T12:36:00Z'),
};
const scope = 'Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date';

describe('signAwsRequest', () => {
  it.each([
    ['get-vanilla', 'GET', 'https://example.amazonaws.com/', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'],
    [
      'post-vanilla',
      'POST',
      'https://example.amazonaws.com/',
      '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    ],
    [
      'get-vanilla-query-order-key-case',
      'GET',
      'https://example.amazonaws.com/?Param2=value2&Param1=value1',
      'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    ],
  ])('signs the suite’s %s as AWS does', (_name, method, url, signature) => {
    expect(signAwsRequest({ method, url, headers: {}, body: '' }, suite)).toEqual({
      'x-amz-date': '20150830T123600Z',
      authorization: `AWS4-HMAC-SHA256 ${scope}, Signature=${signature}`,
    });
  });

  it('signs the headers it is given, by lower-case name, and the body', () => {
    const base = { method: 'POST', url: 'https://email.eu-west-1.amazonaws.com/v2/email/outbound-emails', body: '{}' };
    const signed = signAwsRequest({ ...base, headers: { 'Content-Type': 'application/json' } }, suite);
    expect(signed['content-type']).toBe('application/json');
    expect(signed.authorization).toContain('SignedHeaders=content-type;host;x-amz-date');
    const otherBody = signAwsRequest({ ...base, body: '{ }', headers: { 'Content-Type': 'application/json' } }, suite);
    expect(otherBody.authorization).not.toBe(signed.authorization);
  });
});
