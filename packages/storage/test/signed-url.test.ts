import { signUrlPath, verifyUrlToken } from '../src/index.js';

const SECRET = 'test-signing-secret';
const PATH = '/v1/attachments/att_123/content';
const NOW = 1_800_000_000;
const EXPIRES = NOW + 900;
const token = signUrlPath(PATH, EXPIRES, SECRET);

describe('signed URLs', () => {
  it('makes a URL-safe token that opens its path until it expires', () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyUrlToken(PATH, EXPIRES, token, SECRET, NOW)).toBe('valid');
    expect(verifyUrlToken(PATH, String(EXPIRES), token, SECRET, EXPIRES - 1)).toBe('valid');
  });

  it('answers expired from the expiry second on', () => {
    expect(verifyUrlToken(PATH, EXPIRES, token, SECRET, EXPIRES)).toBe('expired');
    expect(verifyUrlToken(PATH, EXPIRES, token, SECRET, EXPIRES + 3600)).toBe('expired');
  });

  it.each([
    ['another path', '/v1/attachments/att_124/content', EXPIRES, token, SECRET],
    ['a path that only extends it', `${PATH}/x`, EXPIRES, token, SECRET],
    ['a later expiry than signed', PATH, EXPIRES + 1, token, SECRET],
    ['another secret', PATH, EXPIRES, signUrlPath(PATH, EXPIRES, 'other-secret'), SECRET],
    ['a token with one character changed', PATH, EXPIRES, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, SECRET],
    ['a token with padding added', PATH, EXPIRES, `${token}=`, SECRET],
    ['a truncated token', PATH, EXPIRES, token.slice(0, 20), SECRET],
    ['an empty token', PATH, EXPIRES, '', SECRET],
    ['a non-numeric expiry', PATH, `${EXPIRES}abc`, token, SECRET],
    ['a negative expiry', PATH, `-${EXPIRES}`, token, SECRET],
    ['a fractional expiry', PATH, `${EXPIRES}.0`, token, SECRET],
    ['an empty expiry', PATH, '', token, SECRET],
  ])('refuses %s', (_case, path, expires, candidate, secret) => {
    expect(verifyUrlToken(path, expires, candidate, secret, NOW)).toBe('invalid');
  });

  it('refuses to sign with an empty secret or a non-integer expiry', () => {
    expect(() => signUrlPath(PATH, EXPIRES, '')).toThrow(RangeError);
    expect(() => signUrlPath(PATH, EXPIRES + 0.5, SECRET)).toThrow(RangeError);
  });
});
