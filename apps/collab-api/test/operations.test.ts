import request from 'supertest';
import { buildApp } from '../src/app.js';
import { createDatabaseClient } from '../src/database.js';
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
  });

  it('GET /ready checks the database', async () => {
    expect((await request(ctx.app).get('/ready')).body).toEqual({ status: 'ready' });
    const unreachable = createDatabaseClient('postgresql://postgres@127.0.0.1:1/collab', 1);
    const res = await request(buildApp({ ...ctx.deps, db: unreachable })).get('/ready');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: 'Database is not reachable' });
    await unreachable.$disconnect();
  });

  it('GET /openapi.json describes the API', async () => {
    expect((await request(ctx.app).get('/openapi.json')).body).toMatchObject({ openapi: '3.1.0', info: { title: 'collab-api' } });
  });

  it('answers errors in the FastAPI shape its clients parse', async () => {
    const res = await request(ctx.app).get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'No route for GET /api/v1/nothing-here' });
    expect(res.headers['x-request-id']).toBeDefined();
  });
});
