/**
 * Token forgery against the real app: every bad token is refused with 401 on a real route, and
 * tokens of deleted users and of users of deleted tenants no longer sign in. (The verifier's own
 * suite is test/auth; this one proves the app's wiring.)
 */
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { forge, hmacSha256, nowSeconds } from './auth/app.js';
import { as, bearer, createTestContext, TEST_SECRET, type TestContext } from './context.js';
import { operatorToken, seedTenant, type TenantFixture } from './fixtures.js';

async function expect401(app: TestContext['app'], token: string | undefined, detail: string): Promise<void> {
  const call = request(app).get('/api/v1/users/me');
  const res = await (token === undefined ? call : call.set(bearer(token)));
  expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: { detail } });
  expect(res.headers['www-authenticate']).toBe('Bearer');
}

describe('with HS256 tokens (COLLAB_JWT_SECRET)', () => {
  let ctx: TestContext;
  let acme: TenantFixture;
  beforeAll(async () => {
    ctx = await createTestContext();
    acme = await seedTenant(ctx, 'Acme');
  });
  afterAll(() => ctx.close());

  const signed = (claims: object, options: jwt.SignOptions = {}) =>
    jwt.sign({ sub: acme.user.sub, exp: nowSeconds() + 600, ...claims }, TEST_SECRET, { algorithm: 'HS256', ...options });

  it('lets a valid token through', async () => {
    expect((await as(ctx.app, signed({})).get('/api/v1/users/me')).body.id).toBe(acme.user.id);
  });

  it('refuses a request without a token, or with another scheme', async () => {
    await expect401(ctx.app, undefined, 'Authentication required');
    const res = await request(ctx.app)
      .get('/api/v1/projects')
      .set('Authorization', `Basic ${Buffer.from('a:b').toString('base64')}`);
    expect(res.status).toBe(401);
  });

  it('refuses alg none', async () => {
    await expect401(
      ctx.app,
      forge({ alg: 'none', typ: 'JWT' }, { sub: acme.user.sub, exp: nowSeconds() + 600 }),
      'Invalid token',
    );
  });

  it('refuses an RS256 token, whatever key signed it', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await expect401(
      ctx.app,
      jwt.sign({ sub: acme.user.sub, exp: nowSeconds() + 600 }, privateKey, { algorithm: 'RS256' }),
      'Invalid token',
    );
  });

  it('refuses a token signed with another secret, or altered after signing', async () => {
    await expect401(ctx.app, jwt.sign({ sub: acme.user.sub, exp: nowSeconds() + 600 }, 'x'.repeat(40)), 'Invalid token');
    const [header, , signature] = signed({}).split('.');
    const payload = Buffer.from(JSON.stringify({ sub: acme.admin.sub, exp: nowSeconds() + 600, platform_admin: true })).toString(
      'base64url',
    );
    await expect401(ctx.app, `${header}.${payload}.${signature}`, 'Invalid token');
  });

  it('refuses an expired token, and one without exp', async () => {
    await expect401(ctx.app, signed({ exp: nowSeconds() - 3600 }), 'Token expired');
    await expect401(ctx.app, jwt.sign({ sub: acme.user.sub }, TEST_SECRET), 'Invalid token');
  });

  it('refuses a token for an unknown subject', async () => {
    await expect401(ctx.app, ctx.token('idp|nobody'), 'Unknown user');
  });

  it('refuses the tokens of a deleted user', async () => {
    const team = await seedTenant(ctx, 'Team');
    await as(ctx.app, team.admin.token).delete(`/api/v1/users/${team.editor.id}`).expect(204);
    await expect401(ctx.app, team.editor.token, 'Unknown user');
  });

  it('refuses the tokens of the users of a deleted tenant', async () => {
    const doomed = await seedTenant(ctx, 'Doomed');
    await as(ctx.app, operatorToken(ctx)).delete(`/api/v1/tenants/${doomed.id}`).expect(204);
    await expect401(ctx.app, doomed.admin.token, 'Unknown user');
  });

  it('lets a platform operator who is no user reach the tenant operations only', async () => {
    const operator = as(ctx.app, operatorToken(ctx));
    expect((await operator.get('/api/v1/tenants')).status).toBe(200);
    expect((await operator.get('/api/v1/projects')).body).toEqual({
      detail: 'Unknown user: this operation needs a user of a tenant',
    });
  });
});

describe('with a configured issuer and audience', () => {
  let ctx: TestContext;
  let acme: TenantFixture;
  beforeAll(async () => {
    ctx = await createTestContext({ COLLAB_JWT_ISSUER: 'https://idp.acme.test/', COLLAB_JWT_AUDIENCE: 'collab-api' });
    acme = await seedTenant(ctx, 'Acme');
  });
  afterAll(() => ctx.close());

  it('accepts only tokens for that audience from that issuer', async () => {
    expect((await as(ctx.app, acme.user.token).get('/api/v1/users/me')).status).toBe(200);
    const sign = (options: jwt.SignOptions) => jwt.sign({ sub: acme.user.sub }, TEST_SECRET, { expiresIn: 600, ...options });
    await expect401(ctx.app, sign({ issuer: 'https://evil.test/', audience: 'collab-api' }), 'Invalid token');
    await expect401(ctx.app, sign({ issuer: 'https://idp.acme.test/', audience: 'another-api' }), 'Invalid token');
    await expect401(ctx.app, sign({}), 'Invalid token');
  });
});

describe('with RS256 tokens from the identity provider (COLLAB_JWKS_URL)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = createServer((_req, res) => {
    const key = { ...publicKey.export({ format: 'jwk' }), kid: 'key-1', alg: 'RS256', use: 'sig' };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key] }));
  });
  let ctx: TestContext;
  let acme: TenantFixture;
  beforeAll(async () => {
    jwks.listen(0, '127.0.0.1');
    await once(jwks, 'listening');
    const { port } = jwks.address() as AddressInfo;
    ctx = await createTestContext({ COLLAB_JWKS_URL: `http://127.0.0.1:${port}/jwks.json` });
    acme = await seedTenant(ctx, 'Acme');
  });
  afterAll(async () => {
    await ctx.close();
    jwks.close();
    jwks.closeAllConnections();
  });

  const claims = () => ({ sub: acme.user.sub, exp: nowSeconds() + 600 });

  it("accepts the provider's tokens", async () => {
    const token = jwt.sign(claims(), privateKey, { algorithm: 'RS256', keyid: 'key-1' });
    expect((await as(ctx.app, token).get('/api/v1/users/me')).body.id).toBe(acme.user.id);
  });

  it('refuses an HS256 token signed with the public key (algorithm confusion)', async () => {
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    await expect401(ctx.app, forge({ alg: 'HS256', typ: 'JWT', kid: 'key-1' }, claims(), hmacSha256(pem)), 'Invalid token');
  });

  it('refuses alg none, tokens signed with another key, and local tokens', async () => {
    await expect401(ctx.app, forge({ alg: 'none', kid: 'key-1' }, claims()), 'Invalid token');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    await expect401(ctx.app, jwt.sign(claims(), other, { algorithm: 'RS256', keyid: 'key-1' }), 'Invalid token');
    await expect401(ctx.app, acme.user.token, 'Invalid token');
  });
});
