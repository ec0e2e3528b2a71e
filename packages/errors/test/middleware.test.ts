import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import {
  collabErrorFormat,
  errorHandler,
  inboxErrorFormat,
  notFoundHandler,
  parseInput,
  RateLimitedError,
  requestId,
} from '../src/index.js';

function appWith(format: typeof inboxErrorFormat) {
  const logged: object[] = [];
  const app = express();
  app.use(requestId());
  app.use(express.json({ limit: 100 }));
  app.post('/things', (req, res) => {
    res.json(parseInput(z.object({ name: z.string() }), 'body', req.body));
  });
  app.get('/boom', () => {
    throw new Error('connect ECONNREFUSED 10.0.0.5:5432 at /srv/app/src/db.ts:12 SELECT * FROM secrets');
  });
  app.get('/async-boom', async () => {
    await Promise.resolve();
    throw new TypeError('Cannot read properties of undefined');
  });
  app.get('/busy', () => {
    // What Prisma throws when an interactive transaction waited past its maxWait for a connection.
    throw Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), {
      name: 'PrismaClientKnownRequestError',
      code: 'P2028',
    });
  });
  app.get('/slow-down', () => {
    throw new RateLimitedError('Too many requests', 30);
  });
  app.use(notFoundHandler());
  app.use(errorHandler({ format, logger: { error: (fields) => logged.push(fields) } }));
  return { app, logged };
}

describe('requestId', () => {
  it('echoes an acceptable caller id and makes one up otherwise', async () => {
    const { app } = appWith(inboxErrorFormat);
    const echoed = await request(app).get('/nowhere').set('x-request-id', 'abc-123');
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const replaced = await request(app).get('/nowhere').set('x-request-id', 'bad id\twith "quotes"');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('errorHandler', () => {
  it('never leaks the message, stack or SQL of an unexpected error, and logs it with the request id', async () => {
    const { app, logged } = appWith(inboxErrorFormat);
    const res = await request(app).get('/boom').set('x-request-id', 'req-1');
    expect(res.status).toBe(500);
    expect(res.headers['x-request-id']).toBe('req-1');
    expect(res.body).toEqual({
      error: { code: 'internal_error', message: 'Internal server error (request id req-1)', details: { request_id: 'req-1' } },
    });
    expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|secrets|src\/db/);
    expect(logged).toEqual([expect.objectContaining({ requestId: 'req-1', method: 'GET', url: '/boom' })]);
  });

  it('catches errors thrown by async handlers (Express 5)', async () => {
    const { app } = appWith(collabErrorFormat);
    const res = await request(app).get('/async-boom');
    expect(res.status).toBe(500);
    expect(res.body.detail).toMatch(/^Internal server error \(request id [0-9a-f-]{36}\)$/);
  });

  it('answers unknown routes with 404 in the service format', async () => {
    const { app } = appWith(inboxErrorFormat);
    const res = await request(app).delete('/v1/nothing');
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'not_found', message: 'No route for DELETE /v1/nothing', details: {} });
  });

  it('turns malformed JSON into a validation error, never a 500', async () => {
    const inbox = await request(appWith(inboxErrorFormat).app)
      .post('/things')
      .set('content-type', 'application/json')
      .send('{"name": ');
    expect(inbox.status).toBe(400);
    expect(inbox.body.error.code).toBe('validation_error');
    const collab = await request(appWith(collabErrorFormat).app)
      .post('/things')
      .set('content-type', 'application/json')
      .send('{"name": ');
    expect(collab.status).toBe(422);
    expect(collab.body).toEqual({ detail: [{ loc: ['body'], msg: 'Request body is not valid JSON', type: 'json_invalid' }] });
  });

  it('tells JSON that is no object or array (strict parsing refuses it) from JSON that does not parse', async () => {
    for (const body of ['null', '5', '"text"', ' true ']) {
      const res = await request(appWith(collabErrorFormat).app)
        .post('/things')
        .set('content-type', 'application/json')
        .send(body);
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({
        body,
        status: 422,
        detail: [{ loc: ['body'], msg: 'Request body must be a JSON object or array', type: 'json_type' }],
      });
    }
    const broken = await request(appWith(collabErrorFormat).app)
      .post('/things')
      .set('content-type', 'application/json')
      .send('nul');
    expect(broken.body.detail[0].type).toBe('json_invalid');
  });

  it('turns an oversized body into 413 payload_too_large', async () => {
    const res = await request(appWith(inboxErrorFormat).app)
      .post('/things')
      .send({ name: 'x'.repeat(500) });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'payload_too_large', details: { limit_bytes: 100 } });
  });

  it('turns an unsupported body encoding into 415', async () => {
    const res = await request(appWith(inboxErrorFormat).app)
      .post('/things')
      .set('content-type', 'application/json')
      .set('content-encoding', 'compress')
      .send('{}');
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  it('sets the headers an error carries', async () => {
    const res = await request(appWith(inboxErrorFormat).app).get('/slow-down');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.body.error.code).toBe('rate_limited');
  });

  it('answers a database transaction that timed out under load with 503 and Retry-After, and logs it', async () => {
    for (const format of [inboxErrorFormat, collabErrorFormat]) {
      const { app, logged } = appWith(format);
      const res = await request(app).get('/busy');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(JSON.stringify(res.body)).toContain('try again shortly');
      expect(JSON.stringify(res.body)).not.toContain('Transaction API error');
      expect(logged).toEqual([expect.objectContaining({ url: '/busy' })]);
    }
  });

  it('answers validation errors with the issue list', async () => {
    const res = await request(appWith(collabErrorFormat).app).post('/things').send({});
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [{ loc: ['body', 'name'], msg: 'Field required', type: 'missing' }] });
  });
});
