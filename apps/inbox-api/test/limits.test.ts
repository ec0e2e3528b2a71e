import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { MAX_JSON_CONTAINERS } from '@repo/http';
import { statusLineBeforeBody } from '@repo/testing';
import { createTestContext, type TestContext } from './context.js';

// The tests differ only in settings: each runs its own app instance (with its own in-process
// counters) as a replica on one shared database.
let base: TestContext;
beforeAll(async () => {
  base = await createTestContext();
});
afterAll(() => base.close());

describe('API keys (INBOX_API_KEYS)', () => {
  it('require Authorization: Bearer <key> on every /v1 request, and leave probes open', async () => {
    const ctx = await base.replica({ INBOX_API_KEYS: 'key-one,key-two' });
    try {
      for (const headers of [
        {},
        { authorization: 'Bearer wrong' },
        { authorization: 'Basic key-one' },
        { authorization: 'Bearer key-one extra' },
        { authorization: 'key-one' },
      ]) {
        const res = await request(ctx.app).get('/v1/inboxes').set(headers);
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
        expect(res.headers['www-authenticate']).toBe('Bearer');
      }
      expect((await request(ctx.app).get('/v1/inboxes').set('authorization', 'Bearer key-one')).status).toBe(200);
      expect((await request(ctx.app).get('/v1/inboxes').set('authorization', 'bearer key-two')).status).toBe(200);
      expect((await request(ctx.app).get('/health')).status).toBe(200);
    } finally {
      await ctx.close();
    }
  });

  it('are checked before the body is read: no one without a key makes the process read or parse 35 MB', async () => {
    const ctx = await base.replica({ INBOX_API_KEYS: 'key-one' });
    const server = ctx.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const statusLine = (path: string) => statusLineBeforeBody((server.address() as AddressInfo).port, path);
    try {
      expect(await statusLine('/v1/messages')).toBe('HTTP/1.1 401 Unauthorized');
      expect(await statusLine('/nowhere')).toBe('HTTP/1.1 404 Not Found');
    } finally {
      server.close();
      await ctx.close();
    }
  });

  it('do not make the JSON of any body parsed past a million objects and arrays (413), the providers’ webhooks’ too', async () => {
    const body = `[${Array.from({ length: MAX_JSON_CONTAINERS }, () => '{}').join(',')}]`;
    for (const path of ['/webhooks/mailgun', '/v1/messages']) {
      const res = await request(base.app).post(path).set('content-type', 'application/json').send(body);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 413, code: 'payload_too_large' });
    }
  });

  it('answer 429 with Retry-After to an address that keeps sending wrong keys, and never refuse a right key', async () => {
    // One address for everyone: clients behind a proxy that TRUST_PROXY_HOPS does not unwrap.
    const ctx = await base.replica({ INBOX_API_KEYS: 'key-one,key-two', INBOX_AUTH_FAILURES_PER_MINUTE: '10' });
    try {
      const withKey = (key: string) => request(ctx.app).get('/v1/inboxes').set('authorization', `Bearer ${key}`);
      const statuses = [];
      for (let i = 0; i < 11; i++) statuses.push((await withKey(`guess-${i}`)).status);
      expect(statuses).toEqual([...Array<number>(10).fill(401), 429]);

      const right = await withKey('key-one');
      expect(right.status).toBe(200);
      expect((await withKey('key-two')).status).toBe(200);

      const wrong = await withKey('guess-11');
      expect(wrong.status).toBe(429);
      expect(wrong.body.error).toMatchObject({
        code: 'rate_limited',
        message: 'Too many requests with a wrong API key from this address: at most 10 per minute',
      });
      expect(Number(wrong.headers['retry-after'])).toBeGreaterThan(0);
      // A missing key is a wrong one.
      expect((await request(ctx.app).get('/v1/inboxes')).status).toBe(429);
      expect((await withKey('key-one')).status).toBe(200);
    } finally {
      await ctx.close();
    }
  });

  it('count wrong keys per client address', async () => {
    const ctx = await base.replica({ INBOX_API_KEYS: 'key-one', INBOX_AUTH_FAILURES_PER_MINUTE: '3', TRUST_PROXY_HOPS: '1' });
    try {
      const from = (address: string, key: string) =>
        request(ctx.app)
          .get('/v1/inboxes')
          .set({ 'x-forwarded-for': address, authorization: `Bearer ${key}` });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await from('203.0.113.7', `guess-${i}`)).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      expect((await from('203.0.113.7', 'key-one')).status).toBe(200);
      // Another address is not affected.
      expect((await from('198.51.100.2', 'wrong')).status).toBe(401);
      expect((await from('198.51.100.2', 'key-one')).status).toBe(200);
    } finally {
      await ctx.close();
    }
  });
});

describe('requests per minute (INBOX_RATE_LIMIT_PER_MINUTE)', () => {
  it('limit each API key on its own, with Retry-After', async () => {
    const ctx = await base.replica({ INBOX_API_KEYS: 'a,b', INBOX_RATE_LIMIT_PER_MINUTE: '3' });
    try {
      for (let i = 0; i < 3; i++) await request(ctx.app).get('/v1/inboxes').set('authorization', 'Bearer a').expect(200);
      const limited = await request(ctx.app).get('/v1/inboxes').set('authorization', 'Bearer a');
      expect(limited.status).toBe(429);
      expect(limited.body.error).toMatchObject({ code: 'rate_limited', message: 'Too many requests: at most 3 per minute' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      await request(ctx.app).get('/v1/inboxes').set('authorization', 'Bearer b').expect(200);
      expect((await request(ctx.app).get('/health')).status).toBe(200);
    } finally {
      await ctx.close();
    }
  });

  it('limit by client address when the API is open, and 0 disables the limit', async () => {
    const limited = await base.replica({ INBOX_RATE_LIMIT_PER_MINUTE: '2' });
    const unlimited = await base.replica({ INBOX_RATE_LIMIT_PER_MINUTE: '0' });
    try {
      await request(limited.app).get('/v1/inboxes').expect(200);
      await request(limited.app).get('/v1/inboxes').expect(200);
      expect((await request(limited.app).get('/v1/inboxes')).status).toBe(429);
      for (let i = 0; i < 20; i++) await request(unlimited.app).get('/v1/inboxes').expect(200);
    } finally {
      await Promise.all([limited.close(), unlimited.close()]);
    }
  });
});

describe('shared counters (REDIS_URL)', () => {
  it('make replicas share the sends per inbox per hour', async () => {
    // Two replicas on one database and one Redis. Counters are keyed by inbox id, new in every run.
    const env = { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', INBOX_SEND_LIMIT_PER_HOUR: '2' };
    const replicaA = await createTestContext(env);
    const replicaB = await replicaA.replica();
    try {
      const inbox = (await request(replicaA.app).post('/v1/inboxes').send({ name: 'Shared', email_username: 'shared' })).body;
      const send = (app: typeof replicaA.app) =>
        request(app)
          .post('/v1/messages')
          .send({ inbox_id: inbox.id, to: ['x@example.com'], subject: 's', body: 'b' });
      await send(replicaA.app).expect(201);
      await send(replicaB.app).expect(201);
      expect((await send(replicaA.app)).status).toBe(429);
      expect((await send(replicaB.app)).status).toBe(429);
    } finally {
      await replicaB.close();
      await replicaA.close();
    }
  });
});
