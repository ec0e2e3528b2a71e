import { base64ByteLength } from '../src/messages/base64.js';

describe('base64ByteLength', () => {
  it.each([
    ['', 0],
    ['aGk=', 2],
    ['aGk', 2],
    ['aGVsbG8=', 5],
    ['aGVsbG8', 5],
    ['aGVs\r\nbG8h', 6],
    [' aG Vs bG 8h ', 6],
    ['+/+/', 3],
    ['QQ==', 1],
  ])('%j decodes to %d bytes', (text, bytes) => {
    expect(base64ByteLength(text)).toBe(bytes);
    expect(Buffer.from(text, 'base64')).toHaveLength(bytes);
  });

  it.each([['a'], ['aGk=='], ['aGk=a'], ['QQ=='.replace('==', '=')], ['a==='], ['aGk!'], ['aG-k'], ['aGk_'], ['\u0000'], ['é']])(
    'refuses %j',
    (text) => {
      expect(base64ByteLength(text)).toBeUndefined();
    },
  );

  it('reads 40 MB of base64 in one linear pass', () => {
    const content = Buffer.alloc(30 * 1024 * 1024, 7).toString('base64');
    expect(base64ByteLength(content)).toBe(30 * 1024 * 1024);
    expect(base64ByteLength(`${content.slice(0, -4)}*AAA`)).toBeUndefined();
  });
});
