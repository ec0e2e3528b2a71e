import request from 'supertest';
import { createDatabaseClient } from '../src/database.js';
import { buildApp } from '../src/app.js';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('operations endpoints', () => {
  it('GET /health answers 200 {"status":"ok"}', async () => {
    const res = await request(ctx.app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('GET /ready answers 200 when the database answers', async () => {
    expect((await request(ctx.app).get('/ready')).body).toEqual({ status: 'ready' });
  });

  it('GET /ready answers 503 when the database does not', async () => {
    const unreachable = createDatabaseClient('postgresql://postgres@127.0.0.1:1/inbox', 1);
    const res = await request(buildApp({ ...ctx.deps, db: unreachable })).get('/ready');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: { code: 'service_unavailable', message: 'Database is not reachable', details: {} } });
    await unreachable.$disconnect();
  });

  it('GET /metrics serves Prometheus metrics', async () => {
    const res = await request(ctx.app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain('http_request_duration_seconds');
  });

  it('GET /openapi.json describes the API and /docs renders it', async () => {
    const doc = await request(ctx.app).get('/openapi.json');
    expect(doc.body).toMatchObject({ openapi: '3.1.0', info: { title: 'inbox-api' } });
    expect((await request(ctx.app).get('/docs')).status).toBe(200);
  });

  it('answers unknown paths with the inbox error envelope', async () => {
    const res = await request(ctx.app).get('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: 'No route for GET /v1/nothing-here', details: {} } });
  });
});
