import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { z } from 'zod';
import { statusLineBeforeBody } from '@repo/testing';
import { collabErrorFormat, inboxErrorFormat, NotFoundError, UnauthorizedError } from '@repo/errors';
import { createMetrics, createServiceApp, OpenAPIRegistry, type ServiceAppOptions } from '../src/index.js';
import { MAX_JSON_CONTAINERS } from '../src/well-formed.js';

function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  // As written: JSON.parse would hide a key written twice (the last one wins).
  const rawLines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      rawLines.push(chunk.toString());
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines, rawLines };
}

function buildTestApp(overrides: Partial<ServiceAppOptions> = {}) {
  const { logger, lines, rawLines } = captureLogs();
  const openapi = new OpenAPIRegistry();
  const routes = express.Router();
  const thing = z.object({ id: z.string() });
  openapi.registerPath({
    method: 'get',
    path: '/v1/things/{thing_id}',
    summary: 'Get a thing',
    request: { params: z.object({ thing_id: z.string() }) },
    responses: { 200: { description: 'The thing', content: { 'application/json': { schema: thing } } } },
  });
  routes.get('/v1/things/:thing_id', (req, res) => {
    if (req.params.thing_id === 'missing') throw new NotFoundError('Thing not found');
    res.json({ id: req.params.thing_id });
  });
  routes.post('/v1/things', (req, res) => {
    res.status(201).json(req.body);
  });
  const app = createServiceApp({
    service: 'test-api',
    version: '1.2.3',
    logger,
    metrics: createMetrics({ service: 'test-api', collectDefault: false }),
    errorFormat: inboxErrorFormat,
    checkReadiness: () => Promise.resolve(),
    openapi,
    routes,
    jsonLimitBytes: 1024,
    ...overrides,
  });
  return { app, lines, rawLines };
}

describe('probes', () => {
  it('answers GET /health with 200 {"status":"ok"}', async () => {
    const res = await request(buildTestApp().app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('answers GET /ready with 200 when the readiness check passes', async () => {
    expect((await request(buildTestApp().app).get('/ready')).body).toEqual({ status: 'ready' });
  });

  it('answers GET /ready with 503 in the service format when the database is unreachable', async () => {
    const failing = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const inbox = await request(buildTestApp({ checkReadiness: failing }).app).get('/ready');
    expect(inbox.status).toBe(503);
    expect(inbox.body).toEqual({ error: { code: 'service_unavailable', message: 'Database is not reachable', details: {} } });
    const collab = await request(buildTestApp({ checkReadiness: failing, errorFormat: collabErrorFormat }).app).get('/ready');
    expect(collab.body).toEqual({ detail: 'Database is not reachable' });
  });
});

describe('metrics', () => {
  it('counts requests by route pattern, never by raw path', async () => {
    const { app } = buildTestApp();
    await request(app).get('/v1/things/a1');
    await request(app).get('/v1/things/b2');
    await request(app).get('/v1/things/missing');
    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{service="test-api",method="GET",route="\/v1\/things\/:thing_id",status_code="200"\} 2/,
    );
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{service="test-api",method="GET",route="\/v1\/things\/:thing_id",status_code="404"\} 1/,
    );
    expect(res.text).not.toContain('a1');
  });
});

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document with the app routes and the probes', async () => {
    const res = await request(buildTestApp().app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { title: 'test-api', version: '1.2.3' } });
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/v1/things/{thing_id}', '/health', '/ready', '/metrics']),
    );
    expect(res.body.paths['/v1/things/{thing_id}'].get.parameters).toEqual([
      expect.objectContaining({ name: 'thing_id', in: 'path', required: true }),
    ]);
  });

  it('serves the docs page and its assets locally, without inline scripts', async () => {
    const { app } = buildTestApp();
    const page = await request(app).get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).not.toMatch(/<script>(?!<\/script>)/);
    for (const asset of ['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/init.js']) {
      const res = await request(app).get(asset);
      expect(res.status).toBe(200);
    }
    expect((await request(app).get('/docs/init.js')).text).toContain("url: '/openapi.json'");
    expect((await request(app).get('/docs/package.json')).status).toBe(404);
  });
});

describe('request handling', () => {
  it('tags every response, errors included, with x-request-id', async () => {
    const { app } = buildTestApp();
    for (const path of ['/health', '/v1/things/missing', '/nope']) {
      expect((await request(app).get(path)).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('sets security headers and hides the framework', async () => {
    const res = await request(buildTestApp().app).get('/health');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('computes no ETag over an answer (a hash of the whole body on the event loop)', async () => {
    const res = await request(buildTestApp().app).get('/health');
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBeUndefined();
  });

  it('refuses a JSON body that is not valid UTF-8 instead of storing U+FFFD', async () => {
    const body = Buffer.concat([Buffer.from('{"name": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const res = await request(buildTestApp().app)
      .post('/v1/things')
      .set('content-type', 'application/json')
      // As bytes: superagent would serialise a Buffer as JSON.
      .serialize(() => body as unknown as string)
      .send(body);
    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 400,
      body: {
        error: {
          code: 'validation_error',
          message: 'Invalid request: body: Request body is not valid UTF-8',
          details: { issues: [{ loc: ['body'], msg: 'Request body is not valid UTF-8', type: 'value_error' }] },
        },
      },
    });
    const good = await request(buildTestApp().app).post('/v1/things').send({ name: 'café' });
    expect(good.body).toEqual({ name: 'café' });
  });

  it('refuses with 413, before parsing it, a body of more objects and arrays than MAX_JSON_CONTAINERS', async () => {
    const { app } = buildTestApp({ jsonLimitBytes: 8 * 1024 * 1024 });
    const many = (count: number) => `[${Array.from({ length: count }, () => '{}').join(',')}]`;
    const refused = await request(app).post('/v1/things').set('content-type', 'application/json').send(many(MAX_JSON_CONTAINERS));
    // The array itself is one more.
    expect({ status: refused.status, body: refused.body as unknown }).toEqual({
      status: 413,
      body: {
        error: {
          code: 'payload_too_large',
          message: `Request body holds more than ${MAX_JSON_CONTAINERS} objects and arrays`,
          details: { max_containers: MAX_JSON_CONTAINERS },
        },
      },
    });
    const taken = await request(app)
      .post('/v1/things')
      .set('content-type', 'application/json')
      .send(many(MAX_JSON_CONTAINERS - 1));
    expect({ status: taken.status, length: (taken.body as unknown[]).length }).toEqual({
      status: 201,
      length: MAX_JSON_CONTAINERS - 1,
    });
  });

  it('rejects a JSON body over the limit with 413', async () => {
    const res = await request(buildTestApp().app)
      .post('/v1/things')
      .send({ big: 'x'.repeat(2000) });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('answers what runs before the body, and paths whose bodies are not parsed, without reading the body', async () => {
    const beforeBody = express.Router();
    beforeBody.use('/v1', (req, _res, next) =>
      next(req.get('authorization') ? undefined : new UnauthorizedError('Key required')),
    );
    const { app } = buildTestApp({ beforeBody, jsonBodyPaths: ['/v1'] });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const statusLine = (path: string, headers?: Record<string, string>) => statusLineBeforeBody(port, path, { headers });
    try {
      expect(await statusLine('/v1/things')).toBe('HTTP/1.1 401 Unauthorized');
      expect(await statusLine('/elsewhere')).toBe('HTTP/1.1 404 Not Found');
      // With a key the body would be read: a declared length over the limit is refused before any of it is
      // (body-parser answers only once all of it has come, which a client that sends less never lets happen).
      expect(await statusLine('/v1/things', { Authorization: 'Bearer k' })).toBe('HTTP/1.1 413 Payload Too Large');
    } finally {
      server.close();
    }
  });

  it('writes one log line per request with id, route, status and duration, and no credentials', async () => {
    const { app, lines } = buildTestApp();
    await request(app).get('/v1/things/a1?token=s3cret&x=1').set('x-request-id', 'req-42').set('authorization', 'Bearer abc');
    const line = lines.find((entry) => (entry.req as { id?: string } | undefined)?.id === 'req-42');
    expect(line).toMatchObject({
      req: { id: 'req-42', method: 'GET', url: '/v1/things/a1?token=%5Bredacted%5D&x=1' },
      res: { statusCode: 200 },
      route: '/v1/things/:thing_id',
      responseTime: expect.any(Number),
    });
    expect(JSON.stringify(lines)).not.toMatch(/s3cret|Bearer abc/);
  });

  it('names the route once per log line, as matched when the request finished', async () => {
    const { app, rawLines } = buildTestApp();
    await request(app).get('/health').set('x-request-id', 'probe-1');
    await request(app).get('/nowhere').set('x-request-id', 'lost-1');
    const lineOf = (id: string) => rawLines.find((line) => line.includes(`"id":"${id}"`))!;
    expect(lineOf('probe-1').match(/"route":/g)).toEqual(['"route":']);
    expect(lineOf('probe-1')).toContain('"route":"/health"');
    expect(lineOf('lost-1').match(/"route":/g)).toEqual(['"route":']);
    expect(lineOf('lost-1')).toContain('"route":"unmatched"');
  });
});
