import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { mintLocalToken } from '../../src/auth/index.js';
import { forge, hmacSha256, KNOWN_SUB, nowSeconds, protectedApp, settingsFrom } from './app.js';

const SECRET = 'local-secret-of-forty-characters-0123456';
const { app, serverErrors } = protectedApp(settingsFrom({ COLLAB_JWT_SECRET: SECRET }));

function get(authorization?: string) {
  const call = request(app).get('/me');
  return authorization === undefined ? call : call.set('Authorization', authorization);
}

async function expect401(authorization: string | undefined, detail: string): Promise<void> {
  const response = await get(authorization);
  expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: { detail } });
  expect(response.headers['www-authenticate']).toBe('Bearer');
}

function signed(payload: object, options: jwt.SignOptions = {}, secret = SECRET): string {
  return jwt.sign({ sub: KNOWN_SUB, exp: nowSeconds() + 600, ...payload }, secret, { algorithm: 'HS256', ...options });
}

afterEach(() => {
  expect(serverErrors).toEqual([]);
});

describe('HS256 tokens', () => {
  it('lets a valid token through, with its claims', async () => {
    const token = mintLocalToken({ secret: SECRET, sub: KNOWN_SUB, email: 'ada@example.com', platformAdmin: true });
    const response = await get(`Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      user: { id: 'u1' },
      sub: KNOWN_SUB,
      email: 'ada@example.com',
      emailVerified: true,
      platformAdmin: true,
    });
  });

  it('takes the scheme in any case', async () => {
    expect((await get(`bearer ${mintLocalToken({ secret: SECRET, sub: KNOWN_SUB })}`)).status).toBe(200);
  });

  it('grants platform admin and verified e-mail only for boolean true', async () => {
    const response = await get(`Bearer ${signed({ email: 'ada@example.com', email_verified: 'true', platform_admin: 'true' })}`);
    expect(response.body).toMatchObject({ emailVerified: false, platformAdmin: false });
  });

  it('leaves out an e-mail that is not printable ASCII, as no stored address is', async () => {
    // Lower-cased in full Unicode, U+212A KELVIN SIGN is an ASCII `k`: it must not match kate@.
    for (const email of ['\u212Aate@example.com', 'nul\u0000@example.com', 'кate@example.com', 'a b@example.com']) {
      const response = await get(`Bearer ${signed({ email, email_verified: true })}`);
      expect({ email, status: response.status, claimed: response.body.email }).toEqual({
        email,
        status: 200,
        claimed: undefined,
      });
    }
  });

  it('reads platform admin from the configured claim', async () => {
    const custom = protectedApp(
      settingsFrom({ COLLAB_JWT_SECRET: SECRET, COLLAB_PLATFORM_ADMIN_CLAIM: 'https://acme.test/operator' }),
    );
    const token = mintLocalToken({
      secret: SECRET,
      sub: KNOWN_SUB,
      platformAdmin: true,
      platformAdminClaim: 'https://acme.test/operator',
    });
    expect((await request(custom.app).get('/me').set('Authorization', `Bearer ${token}`)).body).toMatchObject({
      platformAdmin: true,
    });
    expect((await get(`Bearer ${token}`)).body).toMatchObject({ platformAdmin: false });
  });

  it('answers 401 for a subject the app does not know', async () => {
    await expect401(`Bearer ${mintLocalToken({ secret: SECRET, sub: 'idp|stranger' })}`, 'Unknown user');
  });

  describe('refuses forged tokens', () => {
    it('with alg none', async () => {
      const payload = { sub: KNOWN_SUB, exp: nowSeconds() + 600 };
      await expect401(`Bearer ${forge({ alg: 'none', typ: 'JWT' }, payload)}`, 'Invalid token');
      await expect401(`Bearer ${forge({ alg: 'None', typ: 'JWT' }, payload)}`, 'Invalid token');
    });

    it('signed with another secret', async () => {
      await expect401(`Bearer ${signed({}, {}, 'another-secret-of-forty-characters-98765')}`, 'Invalid token');
    });

    it('whose payload was changed after signing', async () => {
      const [header, , signature] = mintLocalToken({ secret: SECRET, sub: 'idp|stranger' }).split('.');
      const payload = Buffer.from(JSON.stringify({ sub: KNOWN_SUB, exp: nowSeconds() + 600, platform_admin: true })).toString(
        'base64url',
      );
      await expect401(`Bearer ${header}.${payload}.${signature}`, 'Invalid token');
    });

    it('signed with an algorithm this mode does not accept', async () => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      await expect401(
        `Bearer ${jwt.sign({ sub: KNOWN_SUB, exp: nowSeconds() + 600 }, privateKey, { algorithm: 'RS256' })}`,
        'Invalid token',
      );
      await expect401(`Bearer ${signed({}, { algorithm: 'HS512' })}`, 'Invalid token');
    });

    it('with the right signature over a header that claims another algorithm', async () => {
      const token = forge({ alg: 'HS512', typ: 'JWT' }, { sub: KNOWN_SUB, exp: nowSeconds() + 600 }, hmacSha256(SECRET));
      await expect401(`Bearer ${token}`, 'Invalid token');
    });
  });

  describe('checks time claims', () => {
    it('refuses an expired token', async () => {
      await expect401(`Bearer ${signed({ exp: nowSeconds() - 3600 })}`, 'Token expired');
    });

    it('allows the configured clock tolerance, and no more', async () => {
      const token = signed({ exp: nowSeconds() - 10 });
      expect((await get(`Bearer ${token}`)).status).toBe(200);
      const strict = protectedApp(settingsFrom({ COLLAB_JWT_SECRET: SECRET, COLLAB_JWT_CLOCK_TOLERANCE_SECONDS: '0' }));
      const response = await request(strict.app).get('/me').set('Authorization', `Bearer ${token}`);
      expect(response.body).toEqual({ detail: 'Token expired' });
    });

    it('refuses a token that is not valid yet', async () => {
      await expect401(`Bearer ${signed({ nbf: nowSeconds() + 3600 })}`, 'Token not yet valid');
    });

    it('refuses a token without exp, which would never expire', async () => {
      await expect401(`Bearer ${jwt.sign({ sub: KNOWN_SUB }, SECRET, { algorithm: 'HS256' })}`, 'Invalid token');
    });

    it('refuses a token whose sub holds a NUL (no user can have it)', async () => {
      await expect401(`Bearer ${signed({ sub: 'idp|nul\u0000' })}`, 'Invalid token');
    });

    it('refuses a token without sub', async () => {
      await expect401(`Bearer ${jwt.sign({ exp: nowSeconds() + 600 }, SECRET, { algorithm: 'HS256' })}`, 'Invalid token');
    });
  });

  describe('with an issuer and audience configured', () => {
    const strict = protectedApp(
      settingsFrom({ COLLAB_JWT_SECRET: SECRET, COLLAB_JWT_ISSUER: 'https://id.acme.test/', COLLAB_JWT_AUDIENCE: 'collab-api' }),
    );

    async function status(token: string): Promise<unknown> {
      const response = await request(strict.app).get('/me').set('Authorization', `Bearer ${token}`);
      return response.status === 200 ? 200 : response.body;
    }

    it('accepts a token of that issuer for that audience', async () => {
      const token = mintLocalToken({ secret: SECRET, sub: KNOWN_SUB, issuer: 'https://id.acme.test/', audience: 'collab-api' });
      expect(await status(token)).toBe(200);
    });

    it.each([
      ['another issuer', { issuer: 'https://evil.test/', audience: 'collab-api' }],
      ['another audience', { issuer: 'https://id.acme.test/', audience: 'other-api' }],
      ['no issuer', { audience: 'collab-api' }],
      ['no audience', { issuer: 'https://id.acme.test/' }],
    ])('refuses %s, without naming what was expected', async (_case, claims) => {
      expect(await status(mintLocalToken({ secret: SECRET, sub: KNOWN_SUB, ...claims }))).toEqual({ detail: 'Invalid token' });
    });
  });

  describe('refuses malformed Authorization headers', () => {
    const valid = mintLocalToken({ secret: SECRET, sub: KNOWN_SUB });
    const malformed = 'Expected an Authorization header of the form "Bearer <token>"';

    it('and a missing one', async () => {
      await expect401(undefined, 'Authentication required');
    });

    it.each([
      ['a scheme without token', 'Bearer'],
      ['a scheme and a blank', 'Bearer '],
      ['another scheme', 'Basic dXNlcjpwYXNz'],
      ['the token alone', valid],
      ['two tokens', `Bearer ${valid} ${valid}`],
      ['two comma-separated credentials', `Bearer ${valid}, Bearer ${valid}`],
      ['a token that is not a JWT', 'Bearer abcdef'],
      ['10 KB of garbage', `Bearer ${'A'.repeat(10 * 1024)}`],
      ['a 10 KB JWT-shaped token', `Bearer ${'A'.repeat(5000)}.${'B'.repeat(5000)}.C`],
    ])('with %s', async (_case, header) => {
      await expect401(header, malformed);
    });

    it('with garbage in JWT shape', async () => {
      await expect401('Bearer not.a.jwt', 'Invalid token');
      await expect401(`Bearer ${'x'.repeat(100)}.${'y'.repeat(100)}.${'z'.repeat(43)}`, 'Invalid token');
    });
  });
});
