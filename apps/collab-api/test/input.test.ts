/**
 * Text no database stores as sent is refused with 422 naming the field (never 500, never stored
 * as U+FFFD): NUL characters, lone surrogates, and bodies that are not UTF-8. And a table's
 * column count is capped at BigQuery's 10,000.
 */
import request from 'supertest';
import { as, bearer, createTestContext, type TestContext } from './context.js';
import { seedTenant, type TenantFixture } from './fixtures.js';

let ctx: TestContext;
let acme: TenantFixture;
let projectId: string;
let datasetId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
  projectId = (await editor().post('/api/v1/projects', { name: 'Input' }).expect(201)).body.id;
  datasetId = (await editor().post('/api/v1/datasets', { name: 'Input', project_id: projectId }).expect(201)).body.id;
});
afterAll(() => ctx.close());

const editor = () => as(ctx.app, acme.editor.token);

const NUL = { text: 'before\u0000after', msg: 'Must not contain NUL (U+0000) characters' };
const LONE_SURROGATE = {
  text: 'before\ud800after',
  msg: 'Must be valid Unicode: a lone surrogate (\\ud800 to \\udfff) is not a character',
};

describe.each([
  ['NUL', NUL],
  ['a lone surrogate', LONE_SURROGATE],
])('%s in a text field', (name, { text, msg }) => {
  const refused = (loc: (string | number)[]) => ({
    status: 422,
    body: { detail: [{ loc: ['body', ...loc], msg, type: 'string_pattern_mismatch' }] },
  });

  // JSON.stringify writes both as escapes (`\u0000`, `\ud800`), as a client's JSON would carry them.
  async function send(method: 'post' | 'patch', path: string, body: object) {
    const res = await editor()[method](path, body);
    return { status: res.status, body: res.body as unknown };
  }

  it('is refused in project descriptions, on create and update', async () => {
    expect(await send('post', '/api/v1/projects', { name: 'P', description: text })).toEqual(refused(['description']));
    expect(await send('patch', `/api/v1/projects/${projectId}`, { description: text })).toEqual(refused(['description']));
  });

  it('is refused in dataset descriptions, on create and update', async () => {
    expect(await send('post', '/api/v1/datasets', { name: 'D', description: text, project_id: projectId })).toEqual(
      refused(['description']),
    );
    expect(await send('patch', `/api/v1/datasets/${datasetId}`, { description: text })).toEqual(refused(['description']));
  });

  it('is refused in the description of a schema field, on create and update', async () => {
    const schema = [
      { name: 'id', type: 'INT64' },
      { name: 'note', type: 'STRING', description: text },
    ];
    expect(await send('post', '/api/v1/tables', { name: 'T', schema, dataset_id: datasetId })).toEqual(
      refused(['schema', 1, 'description']),
    );
    const table = (
      await editor()
        .post('/api/v1/tables', { name: `Kept ${name}`, schema: [{ name: 'id', type: 'INT64' }], dataset_id: datasetId })
        .expect(201)
    ).body;
    expect(await send('patch', `/api/v1/tables/${table.id}`, { schema: { fields: schema } })).toEqual(
      refused(['schema', 'fields', 1, 'description']),
    );
  });

  it('stores nothing', async () => {
    expect(await ctx.db.project.count({ where: { name: 'P' } })).toBe(0);
    expect(await ctx.db.dataset.count({ where: { name: 'D' } })).toBe(0);
    expect(await ctx.db.table.count({ where: { name: 'T' } })).toBe(0);
    expect((await editor().get(`/api/v1/projects/${projectId}`)).body.description).toBeNull();
  });
});

it('refuses a body that is not UTF-8 (422), instead of storing U+FFFD', async () => {
  const body = Buffer.concat([Buffer.from('{"name": "P", "description": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
  const res = await request(ctx.app)
    .post('/api/v1/projects')
    .set(bearer(acme.editor.token))
    .set('content-type', 'application/json')
    // As bytes: superagent would serialise a Buffer as JSON.
    .serialize(() => body as unknown as string)
    .send(body);
  expect({ status: res.status, body: res.body as unknown }).toEqual({
    status: 422,
    body: { detail: [{ loc: ['body'], msg: 'Request body is not valid UTF-8', type: 'value_error' }] },
  });
  expect(await ctx.db.project.count({ where: { name: 'P' } })).toBe(0);
});

describe('column count', () => {
  const columns = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `c${i}`, type: 'STRING' }));

  it('refuses a table of 10,001 columns with 422', async () => {
    const res = await editor().post('/api/v1/tables', { name: 'Too wide', schema: columns(10_001), dataset_id: datasetId });
    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 422,
      body: {
        detail: [{ loc: ['body', 'schema'], msg: 'Too big: expected array to have <=10000 items', type: 'too_long' }],
      },
    });
    expect(await ctx.db.table.count({ where: { name: 'Too wide' } })).toBe(0);
  });

  it('takes a table of 10,000 columns, and a PATCH to that many', async () => {
    await editor()
      .post('/api/v1/tables', { name: 'Widest', schema: columns(10_000), dataset_id: datasetId })
      .expect(201);
    const narrow = (
      await editor()
        .post('/api/v1/tables', { name: 'Widened', schema: columns(1), dataset_id: datasetId })
        .expect(201)
    ).body;
    const widened = await editor().patch(`/api/v1/tables/${narrow.id}`, { schema: columns(10_000) });
    expect(widened.status).toBe(200);
    expect(widened.body.schema).toHaveLength(10_000);
    const tooMany = await editor().patch(`/api/v1/tables/${narrow.id}`, { schema: columns(10_001) });
    expect(tooMany.status).toBe(422);
  });
});
