import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedPort } from '@repo/testing';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { forge, hmacSha256, KNOWN_SUB, nowSeconds, protectedApp, settingsFrom } from './app.js';

interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function rsaKey(kid: string): SigningKey {
  return { kid, alg: 'RS256', ...generateKeyPairSync('rsa', { modulusLength: 2048 }) };
}

function ecKey(kid: string): SigningKey {
  return { kid, alg: 'ES256', ...generateKeyPairSync('ec', { namedCurve: 'P-256' }) };
}

function tokenOf(key: SigningKey, claims: object = {}): string {
  return jwt.sign({ sub: KNOWN_SUB, exp: nowSeconds() + 600, ...claims }, key.privateKey, { algorithm: key.alg, keyid: key.kid });
}

/** The identity provider's JWKS endpoint: publishes `published`, counts fetches, can stall. */
async function startJwksServer() {
  const state = {
    published: [] as SigningKey[],
    fetches: 0,
    stall: false,
    failure: undefined as { status: number; body: string } | undefined,
  };
  const server: Server = createServer((_req, res) => {
    state.fetches += 1;
    if (state.stall) return;
    if (state.failure) return void res.writeHead(state.failure.status).end(state.failure.body);
    const keys = state.published.map((key) => ({
      ...key.publicKey.export({ format: 'jwk' }),
      kid: key.kid,
      alg: key.alg,
      use: 'sig',
    }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    async close() {
      server.close();
      server.closeAllConnections();
      await once(server, 'close');
    },
  };
}

const rsa = rsaKey('rsa-1');
const ec = ecKey('ec-1');
let jwks: Awaited<ReturnType<typeof startJwksServer>>;

beforeAll(async () => {
  jwks = await startJwksServer();
});

afterAll(async () => {
  await jwks.close();
});

beforeEach(() => {
  Object.assign(jwks.state, { published: [rsa, ec], fetches: 0, stall: false, failure: undefined });
});

function appFor(options: Parameters<typeof protectedApp>[1] = {}) {
  const built = protectedApp(settingsFrom({ COLLAB_JWKS_URL: jwks.url }), options);
  return {
    serverErrors: built.serverErrors,
    call: async (token: string) => {
      const response = await request(built.app).get('/me').set('Authorization', `Bearer ${token}`);
      return response.status === 200 ? 200 : { status: response.status, body: response.body };
    },
  };
}

const invalid = { status: 401, body: { detail: 'Invalid token' } };
const keysUnavailable = {
  status: 503,
  body: { detail: "The identity provider's signing keys could not be fetched; try again shortly" },
};

describe('tokens verified with the JWKS', () => {
  it('accepts RS256 and ES256 tokens of published keys, fetching the set once', async () => {
    const { call, serverErrors } = appFor();
    expect(await call(tokenOf(rsa))).toBe(200);
    expect(await call(tokenOf(ec))).toBe(200);
    expect(await call(tokenOf(rsa))).toBe(200);
    expect(jwks.state.fetches).toBe(1);
    expect(serverErrors).toEqual([]);
  });

  it('accepts a key published after the set was cached (rotation)', async () => {
    const { call } = appFor({ jwksCooldownMs: 100 });
    expect(await call(tokenOf(rsa))).toBe(200);

    const rotated = rsaKey('rsa-2');
    jwks.state.published = [rotated, ec];
    await new Promise((resolve) => setTimeout(resolve, 150));

    expect(await call(tokenOf(rotated))).toBe(200);
    expect(jwks.state.fetches).toBe(2);
  });

  it('refetches for unknown key ids no more often than the cooldown allows', async () => {
    const { call } = appFor();
    expect(await call(tokenOf(rsa))).toBe(200);
    for (let i = 0; i < 5; i += 1) expect(await call(tokenOf(rsaKey(`unknown-${i}`)))).toEqual(invalid);
    expect(jwks.state.fetches).toBe(1);
  });

  it('refuses a token signed by a key that is not in the set, even under a published kid', async () => {
    const { call } = appFor({ jwksCooldownMs: 0 });
    expect(await call(tokenOf(rsaKey('rsa-9')))).toEqual(invalid);
    expect(await call(tokenOf(rsaKey('rsa-1')))).toEqual(invalid);
    expect(await call(tokenOf(ecKey('ec-1')))).toEqual(invalid);
  });

  it('refuses an HS256 token signed with the public key as HMAC secret (algorithm confusion)', async () => {
    const { call } = appFor({ jwksCooldownMs: 0 });
    const publicPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const payload = { sub: KNOWN_SUB, exp: nowSeconds() + 600 };
    expect(await call(forge({ alg: 'HS256', typ: 'JWT', kid: 'rsa-1' }, payload, hmacSha256(publicPem)))).toEqual(invalid);
    expect(await call(forge({ alg: 'none', typ: 'JWT', kid: 'rsa-1' }, payload))).toEqual(invalid);
    // Refused on its header, before any key was fetched.
    expect(jwks.state.fetches).toBe(0);
  });

  it('refuses a token whose header names the key of another algorithm', async () => {
    const { call } = appFor({ jwksCooldownMs: 0 });
    const mislabelled = jwt.sign({ sub: KNOWN_SUB, exp: nowSeconds() + 600 }, ec.privateKey, {
      algorithm: 'ES256',
      keyid: 'rsa-1',
    });
    expect(await call(mislabelled)).toEqual(invalid);
  });

  it('answers 503 with Retry-After, and logs the cause, when the JWKS endpoint is down', async () => {
    const built = protectedApp(settingsFrom({ COLLAB_JWKS_URL: `http://127.0.0.1:${await closedPort()}/jwks.json` }));
    const response = await request(built.app)
      .get('/me')
      .set('Authorization', `Bearer ${tokenOf(rsa)}`);
    expect({ status: response.status, body: response.body }).toEqual(keysUnavailable);
    expect(response.headers['retry-after']).toBe('5');
    expect(built.serverErrors).toHaveLength(1);
  });

  it('answers 503 within the timeout when the JWKS endpoint hangs', async () => {
    jwks.state.stall = true;
    const { call, serverErrors } = appFor({ jwksTimeoutMs: 300 });
    expect(await call(tokenOf(rsa))).toEqual(keysUnavailable);
    expect(serverErrors).toHaveLength(1);
  });

  it('answers 503 when the JWKS endpoint answers an error or no key set', async () => {
    for (const failure of [
      { status: 500, body: 'upstream down' },
      { status: 200, body: '{"keys": "none"}' },
    ]) {
      jwks.state.failure = failure;
      const { call, serverErrors } = appFor();
      expect(await call(tokenOf(rsa))).toEqual(keysUnavailable);
      expect(serverErrors).toHaveLength(1);
    }
  });

  it('keeps concurrent requests apart while their key lookups overlap', async () => {
    const { call } = appFor({ jwksCooldownMs: 0 });
    const stranger = rsaKey('rsa-1');
    const tokens = Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? tokenOf(stranger) : tokenOf(i % 3 === 1 ? rsa : ec)));
    const results = await Promise.all(tokens.map((token) => call(token)));
    expect(results).toEqual(tokens.map((_, i) => (i % 3 === 0 ? invalid : 200)));
  });
});
