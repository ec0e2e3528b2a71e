import type { RequestListener } from 'node:http';
import request from 'supertest';
import { checkOpenApiDocument } from './openapi-check.js';

interface OperationsSetUp {
  app: RequestListener;
  /** The same app on a database that does not answer; `close` releases its client. */
  withUnreachableDatabase(): { app: RequestListener; close(): Promise<void> };
  close(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * What every API answers besides its own routes (DESIGN.md, Conventions): probes, metrics, the
 * OpenAPI document and its reference page, 404 in the service's error format, and a request id
 * on every response. `errorBody` is the service's error body for a code and message.
 */
export function describeOperationsEndpoints(
  name: string,
  options: {
    setUp: () => Promise<OperationsSetUp>;
    unknownPath: string;
    errorBody: (code: string, message: string) => unknown;
  },
): void {
  describe(`${name} operations endpoints`, () => {
    let ctx: OperationsSetUp;
    beforeAll(async () => {
      ctx = await options.setUp();
    });
    afterAll(() => ctx.close());

    it('GET /health answers 200 {"status":"ok"}', async () => {
      const res = await request(ctx.app).get('/health');
      expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 200, body: { status: 'ok' } });
    });

    it('GET /ready answers 200 while the database answers, 503 in the error format when it does not', async () => {
      expect((await request(ctx.app).get('/ready')).body).toEqual({ status: 'ready' });
      const unreachable = ctx.withUnreachableDatabase();
      try {
        const res = await request(unreachable.app).get('/ready');
        expect({ status: res.status, body: res.body as unknown }).toEqual({
          status: 503,
          body: options.errorBody('service_unavailable', 'Database is not reachable'),
        });
      } finally {
        await unreachable.close();
      }
    });

    it('GET /metrics serves Prometheus metrics', async () => {
      const res = await request(ctx.app).get('/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toContain('http_request_duration_seconds');
    });

    it('GET /openapi.json describes the API and /docs renders it', async () => {
      expect((await request(ctx.app).get('/openapi.json')).body).toMatchObject({ openapi: '3.1.0', info: { title: name } });
      expect((await request(ctx.app).get('/docs')).status).toBe(200);
    });

    it('GET /openapi.json serves clients that validate with it: patterns compile, examples pass, operations are tagged', async () => {
      const check = checkOpenApiDocument((await request(ctx.app).get('/openapi.json')).body as Record<string, unknown>);
      expect(check.problems).toEqual([]);
      expect(check.examples).toBeGreaterThan(0);
    });

    it('answers an unknown path with 404 in the error format', async () => {
      const res = await request(ctx.app).get(options.unknownPath);
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 404,
        body: options.errorBody('not_found', `No route for GET ${options.unknownPath}`),
      });
    });

    it('echoes the x-request-id a client sends, and makes one up when it sends none', async () => {
      for (const path of ['/health', options.unknownPath]) {
        expect((await request(ctx.app).get(path).set('x-request-id', 'client-req-7')).headers['x-request-id']).toBe(
          'client-req-7',
        );
        expect((await request(ctx.app).get(path)).headers['x-request-id']).toMatch(UUID);
      }
    });
  });
}
