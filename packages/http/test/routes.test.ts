import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { errorHandler, ForbiddenError, inboxErrorBody, inboxErrorFormat, UnauthorizedError } from '@repo/errors';
import { createApi, expressPath, openApiDocument, OpenAPIRegistry, paginationQuery } from '../src/index.js';
import { illFormedInput, MAX_INPUT_NESTING, nestsDeeperThan } from '../src/well-formed.js';

const thing = z.object({ id: z.string(), name: z.string() });

function buildTestApp() {
  const router = express.Router();
  const openapi = new OpenAPIRegistry();
  const api = createApi({ router, openapi, errorBody: inboxErrorBody, tags: ['things'] });
  const seen: unknown[] = [];

  api.route({
    method: 'post',
    path: '/v1/groups/{group_id}/things',
    summary: 'Create a thing',
    params: z.object({ group_id: z.uuid() }),
    query: z.object({ dry_run: z.enum(['true', 'false']).optional() }),
    body: z.object({ name: z.string().min(1) }).strict(),
    status: 201,
    response: thing,
    errors: [404],
    handler: ({ params, query, body }) => {
      seen.push({ params, query, body });
      return { id: 'new', name: body.name };
    },
  });
  api.route({
    method: 'get',
    path: '/v1/things',
    summary: 'List things',
    query: z.object(paginationQuery({ defaultLimit: 50, maxLimit: 200, offsetName: 'offset' })),
    handler: ({ query }) => query,
  });
  api.route({
    method: 'delete',
    path: '/v1/things/{thing_id}',
    summary: 'Delete a thing',
    params: z.object({ thing_id: z.string() }),
    status: 204,
    handler: () => undefined,
  });
  api.route({
    method: 'get',
    path: '/v1/things/{thing_id}/content',
    summary: 'Download',
    params: z.object({ thing_id: z.string() }),
    handler: ({ res }) => {
      res.type('text/plain').send('raw bytes');
      return undefined;
    },
  });
  api.route({
    method: 'put',
    path: '/v1/things/{thing_id}/file',
    summary: 'Store a file and answer it back',
    params: z.object({ thing_id: z.string() }),
    rawBody: { description: 'The file', content: { 'application/octet-stream': z.string().meta({ format: 'binary' }) } },
    rawResponse: {
      description: 'The same bytes',
      content: { 'application/octet-stream': z.string().meta({ format: 'binary' }) },
    },
    handler: async ({ req, res }) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      res.type('application/octet-stream').send(Buffer.concat(chunks));
      return undefined;
    },
  });
  api.route({
    method: 'put',
    path: '/v1/things/{thing_id}',
    summary: 'Replace a thing, at most once per key',
    params: z.object({ thing_id: z.string() }),
    headers: z.object({ 'idempotency-key': z.string().max(10).optional() }),
    handler: ({ params, headers }) => ({ id: params.thing_id, key: headers['idempotency-key'] ?? null }),
  });

  // An API whose handlers get the caller from the request, as the collab API gets its actor.
  const accounts: Record<string, { name: string; admin: boolean }> = {
    'key-ada': { name: 'ada', admin: true },
    'key-bob': { name: 'bob', admin: false },
  };
  const userApi = createApi({
    router,
    openapi,
    errorBody: inboxErrorBody,
    contextErrors: [401],
    context: (req) => {
      const account = accounts[req.get('authorization') ?? ''];
      if (!account) throw new UnauthorizedError('Unknown key');
      return { account };
    },
  });
  userApi.route({
    method: 'get',
    path: '/v1/me',
    summary: 'Who am I',
    handler: ({ account }) => ({ name: account.name }),
  });
  userApi.route({
    method: 'post',
    path: '/v1/admin-only',
    summary: 'Guarded',
    body: z.object({ name: z.string() }),
    errors: [403],
    authorize: ({ account }) => {
      if (!account.admin) throw new ForbiddenError('Admins only');
    },
    handler: ({ account, body }) => ({ by: account.name, name: body.name }),
  });

  const app = express();
  app.use(express.json());
  app.use(router);
  app.use(errorHandler({ format: inboxErrorFormat, logger: { error: () => {} } }));
  return { app, openapi, seen };
}

describe('createApi routes', () => {
  it('hands validated, typed path, query and body to the handler and answers with its status', async () => {
    const { app, seen } = buildTestApp();
    const res = await request(app)
      .post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things?dry_run=true')
      .send({ name: 'widget' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: 'new', name: 'widget' });
    expect(seen).toEqual([
      { params: { group_id: '6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10' }, query: { dry_run: 'true' }, body: { name: 'widget' } },
    ]);
  });

  it('reports every invalid input at once, each pointed at its location', async () => {
    const { app } = buildTestApp();
    const res = await request(app).post('/v1/groups/not-a-uuid/things?dry_run=maybe').send({ name: '', extra: 1 });
    expect(res.status).toBe(400);
    expect(
      res.body.error.details.issues.map((issue: { loc: unknown[]; type: string }) => [issue.loc.join('.'), issue.type]),
    ).toEqual([
      ['path.group_id', 'uuid_parsing'],
      ['query.dry_run', 'enum'],
      ['body.name', 'string_too_short'],
      ['body.extra', 'extra_forbidden'],
    ]);
  });

  it('validates the body when the path is fine', async () => {
    const { app } = buildTestApp();
    const res = await request(app).post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things').send({ name: '', extra: 1 });
    expect(
      res.body.error.details.issues.map((issue: { loc: unknown[]; type: string }) => [issue.loc.join('.'), issue.type]),
    ).toEqual([
      ['body.name', 'string_too_short'],
      ['body.extra', 'extra_forbidden'],
    ]);
  });

  it('treats a missing body as missing fields, not a crash', async () => {
    const res = await request(buildTestApp().app).post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things');
    expect(res.status).toBe(400);
    expect(res.body.error.details.issues[0]).toMatchObject({ loc: ['body'], type: 'missing' });
  });

  it('answers 415 naming the content type for a body that is not JSON', async () => {
    for (const [type, body] of [
      ['text/plain', 'name=x'],
      ['application/x-www-form-urlencoded', 'name=x'],
    ]) {
      const res = await request(buildTestApp().app)
        .post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things')
        .set('content-type', type!)
        .send(body);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 415,
        body: {
          error: {
            code: 'unsupported_media_type',
            message: `Expected a JSON body with Content-Type: application/json (got ${type})`,
            details: {},
          },
        },
      });
    }
  });

  it('reads JSON whose Content-Type carries a charset', async () => {
    const res = await request(buildTestApp().app)
      .post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things')
      .set('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify({ name: 'widget' }));
    expect(res.status).toBe(201);
  });

  it('answers 204 with no body', async () => {
    const res = await request(buildTestApp().app).delete('/v1/things/abc');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('lets a handler write the response itself', async () => {
    const res = await request(buildTestApp().app).get('/v1/things/abc/content');
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('raw bytes');
  });

  it.each([
    ['a NUL in a body string', '{"name": "wid\\u0000get"}', ['body', 'name']],
    ['a lone surrogate in a body string', '{"name": "wid\\ud800get"}', ['body', 'name']],
    ['a NUL in a key', '{"name": "x", "na\\u0000me": "y"}', ['body', 'na\u0000me']],
  ])('refuses %s with 400 naming the field, before validation', async (_case, json, loc) => {
    const res = await request(buildTestApp().app)
      .post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things')
      .set('content-type', 'application/json')
      .send(json);
    expect(res.status).toBe(400);
    expect(res.body.error.details.issues.map((issue: { loc: string[] }) => issue.loc)).toEqual([loc]);
  });

  it('names a bad string by its whole path, as deep as a body may nest', () => {
    let nested: unknown = 'x\u0000';
    for (let level = 0; level < MAX_INPUT_NESTING; level += 1) nested = { a: nested };
    const [issue, ...more] = illFormedInput(nested, 'body');
    expect(more).toEqual([]);
    expect(issue!.loc).toEqual(['body', ...Array.from({ length: MAX_INPUT_NESTING }, () => 'a')]);
  });

  it('walks a value nested 200,000 deep in linear time, reporting once where it nests too deep', () => {
    // Paths copied at every level made this quadratic: a body 30,000 deep held the event loop for ten seconds.
    const depth = 200_000;
    let nested: unknown = 'x\u0000';
    for (let level = 0; level < depth; level += 1) nested = [{ a: nested }];
    const issues = illFormedInput({ list: nested, also: [[{}]] }, 'body');
    expect(issues).toHaveLength(1);
    expect(issues[0]!.msg).toBe(`Must not nest objects and arrays more than ${MAX_INPUT_NESTING} levels deep`);
    // The body is the first level: the value at its 500th key is the 501st object or array.
    expect(issues[0]!.loc).toHaveLength(1 + MAX_INPUT_NESTING);
    expect(issues[0]!.loc.slice(0, 4)).toEqual(['body', 'list', 0, 'a']);
  });

  it('tells a value nested deeper than the limit from one at it (nestsDeeperThan), arrays and objects alike', () => {
    const nest = (levels: number, wrap: (inner: unknown) => unknown) => {
      let value: unknown = 1;
      for (let level = 0; level < levels; level += 1) value = wrap(value);
      return value;
    };
    for (const wrap of [(inner: unknown) => [inner], (inner: unknown) => ({ a: inner })]) {
      expect(nestsDeeperThan(nest(MAX_INPUT_NESTING, wrap))).toBe(false);
      expect(nestsDeeperThan(nest(MAX_INPUT_NESTING + 1, wrap))).toBe(true);
      expect(nestsDeeperThan(nest(200_000, wrap))).toBe(true);
    }
    // Three levels: the object, its array, the object in it.
    expect(nestsDeeperThan({ a: [1, 'x', null, { b: 2 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, 'x', null, { b: [] }] }, 3)).toBe(true);
  });

  it('refuses a body nested deeper than MAX_INPUT_NESTING with 400, without parsing it further', async () => {
    const json = `{"name": "widget", "extra": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const res = await request(buildTestApp().app)
      .post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things')
      .set('content-type', 'application/json')
      .send(json);
    expect(res.status).toBe(400);
    expect(res.body.error.details.issues).toHaveLength(1);
    expect(res.body.error.details.issues[0].type).toBe('too_deep');
    const shallow = `{"name": "widget", "extra": ${'['.repeat(MAX_INPUT_NESTING - 1)}${']'.repeat(MAX_INPUT_NESTING - 1)}}`;
    const fine = await request(buildTestApp().app)
      .post('/v1/groups/6f1c2b4e-8a55-4c1e-9a3a-0c2d5b7e9f10/things')
      .set('content-type', 'application/json')
      .send(shallow);
    expect(fine.body.error?.details?.issues?.some((issue: { type: string }) => issue.type === 'too_deep') ?? false).toBe(false);
  });

  it('refuses a NUL or a malformed percent-escape in the path or the query with 400', async () => {
    const { app } = buildTestApp();
    for (const [path, loc] of [
      ['/v1/things/a%00b/content', 'path.thing_id'],
      ['/v1/things/a%ffb/content', 'path'],
      ['/v1/things?limit=%ff', 'query.limit'],
      ['/v1/things?limit=1%00', 'query.limit'],
    ]) {
      const res = await request(app).get(path!);
      expect({ path, status: res.status, loc: res.body.error.details.issues[0].loc.join('.') }).toEqual({
        path,
        status: 400,
        loc,
      });
    }
  });

  it('validates the headers a route declares, ignoring the others', async () => {
    const { app } = buildTestApp();
    const res = await request(app).put('/v1/things/t1').set('idempotency-key', 'k1').set('x-other', 'y');
    expect(res.body).toEqual({ id: 't1', key: 'k1' });
    expect((await request(app).put('/v1/things/t1')).body).toEqual({ id: 't1', key: null });
    const tooLong = await request(app).put('/v1/things/t1').set('idempotency-key', 'k'.repeat(11));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details.issues[0]).toMatchObject({ loc: ['header', 'idempotency-key'], type: 'string_too_long' });
  });

  it("hands the API's context to the handler, resolved before anything else", async () => {
    const { app } = buildTestApp();
    expect((await request(app).get('/v1/me').set('authorization', 'key-bob')).body).toEqual({ name: 'bob' });
    const anonymous = await request(app).post('/v1/admin-only').send({});
    expect({ status: anonymous.status, code: anonymous.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
  });

  it('authorizes before validating input, so a forbidden caller learns nothing about the schema', async () => {
    const { app } = buildTestApp();
    const forbidden = await request(app).post('/v1/admin-only').set('authorization', 'key-bob').send({});
    expect({ status: forbidden.status, message: forbidden.body.error.message }).toEqual({ status: 403, message: 'Admins only' });
    const invalid = await request(app).post('/v1/admin-only').set('authorization', 'key-ada').send({});
    expect(invalid.status).toBe(400);
    const allowed = await request(app).post('/v1/admin-only').set('authorization', 'key-ada').send({ name: 'x' });
    expect(allowed.body).toEqual({ by: 'ada', name: 'x' });
  });
});

describe('paginationQuery', () => {
  it('applies defaults', async () => {
    expect((await request(buildTestApp().app).get('/v1/things')).body).toEqual({ limit: 50, offset: 0 });
    expect((await request(buildTestApp().app).get('/v1/things?limit=200&offset=7')).body).toEqual({ limit: 200, offset: 7 });
  });

  it.each([
    ['limit=abc', 'query.limit', 'int_parsing', 'Input should be a valid integer'],
    ['limit=1e3', 'query.limit', 'int_parsing', 'Input should be a valid integer'],
    ['limit=', 'query.limit', 'int_parsing', 'Input should be a valid integer'],
    ['limit=-1', 'query.limit', 'greater_than_equal', 'Input should be greater than or equal to 1'],
    ['offset=-5', 'query.offset', 'greater_than_equal', 'Input should be greater than or equal to 0'],
    ['limit=--1', 'query.limit', 'int_parsing', 'Input should be a valid integer'],
    ['limit=0', 'query.limit', 'greater_than_equal', 'Input should be greater than or equal to 1'],
    ['limit=201', 'query.limit', 'less_than_equal', 'Input should be less than or equal to 200'],
    ['offset=1.5', 'query.offset', 'int_parsing', 'Input should be a valid integer'],
    ['limit=1&limit=2', 'query.limit', 'string_type', expect.any(String)],
  ])('rejects %s', async (query, loc, type, msg) => {
    const res = await request(buildTestApp().app).get(`/v1/things?${query}`);
    expect(res.status).toBe(400);
    const [issue] = res.body.error.details.issues;
    expect({ loc: issue.loc.join('.'), type: issue.type, msg: issue.msg }).toEqual({ loc, type, msg });
  });
});

describe('documentation', () => {
  it('documents each route with its schemas, statuses and the error body', () => {
    const doc = openApiDocument(buildTestApp().openapi, { title: 't', version: '1' });
    const create = doc.paths?.['/v1/groups/{group_id}/things']?.post;
    expect(create?.tags).toEqual(['things']);
    expect(Object.keys(create?.responses ?? {})).toEqual(['201', '400', '404']);
    expect(create?.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'group_id', in: 'path' }),
        expect.objectContaining({ name: 'dry_run', in: 'query' }),
      ]),
    );
    const list = doc.paths?.['/v1/things']?.get;
    expect(list?.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'limit',
          schema: expect.objectContaining({ type: 'integer', minimum: 1, maximum: 200, default: 50 }),
        }),
      ]),
    );
    expect(doc.components?.schemas?.Error).toBeDefined();
  });

  it("documents declared headers, and the context's errors on every route of its API", () => {
    const doc = openApiDocument(buildTestApp().openapi, { title: 't', version: '1' });
    expect(doc.paths?.['/v1/things/{thing_id}']?.put?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'idempotency-key', in: 'header', required: false })]),
    );
    expect(Object.keys(doc.paths?.['/v1/me']?.get?.responses ?? {})).toEqual(['200', '401']);
    expect(Object.keys(doc.paths?.['/v1/admin-only']?.post?.responses ?? {})).toEqual(['200', '400', '401', '403']);
  });

  it('documents a body and an answer that the handler reads and writes itself, by media type', async () => {
    const { app, openapi } = buildTestApp();
    const upload = openApiDocument(openapi, { title: 't', version: '1' }).paths?.['/v1/things/{thing_id}/file']?.put;
    expect(upload?.requestBody).toEqual({
      required: true,
      description: 'The file',
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    });
    expect(upload?.responses?.['200']).toEqual({
      description: 'The same bytes',
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    });
    // It takes input, so its invalid input is documented too.
    expect(Object.keys(upload?.responses ?? {})).toEqual(['200', '400']);
    // Neither parsed nor refused as not JSON: the handler reads the bytes.
    const res = await request(app)
      .put('/v1/things/t1/file')
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from([0, 1, 2, 255]));
    expect({ status: res.status, body: [...(res.body as Buffer)] }).toEqual({ status: 200, body: [0, 1, 2, 255] });
  });

  it('converts OpenAPI paths to Express paths', () => {
    expect(expressPath('/v1/inboxes/{inbox_id}/threads/{thread_id}')).toBe('/v1/inboxes/:inbox_id/threads/:thread_id');
  });
});
