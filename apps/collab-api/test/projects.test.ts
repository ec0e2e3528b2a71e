import { as, createTestContext, type TestContext } from './context.js';
import { seedTenant, type TenantFixture } from './fixtures.js';

let ctx: TestContext;
let acme: TenantFixture;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
});
afterAll(() => ctx.close());

const MISSING = '0195a6c1-0000-7000-8000-000000000000';
const user = () => as(ctx.app, acme.user.token);

describe('POST /api/v1/projects', () => {
  it("creates a project in the caller's tenant, for any role", async () => {
    const res = await user().post('/api/v1/projects', { name: 'Churn', description: 'Who leaves, and why' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: acme.id,
      name: 'Churn',
      description: 'Who leaves, and why',
      created_at: expect.any(String),
      archived_at: null,
    });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    expect((await user().post('/api/v1/projects', { name: 'Bare' })).body.description).toBeNull();
  });

  it('answers 422 for invalid input, naming each field', async () => {
    const res = await user().post('/api/v1/projects', { name: 'a\u0000b', description: ['x'], tenant_id: acme.id });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'name'], msg: 'Must not contain NUL (U+0000) characters' }),
      expect.objectContaining({ loc: ['body', 'description'], type: 'string_type' }),
      { loc: ['body', 'tenant_id'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
  });
});

describe('GET /api/v1/projects', () => {
  it('lists live projects oldest first, with skip and limit', async () => {
    // Lists are scoped to the caller's tenant: a tenant of its own starts with none.
    const tenant = await seedTenant(ctx, 'Lists');
    const client = as(ctx.app, tenant.editor.token);
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) ids.push((await client.post('/api/v1/projects', { name }).expect(201)).body.id);
    await client.delete(`/api/v1/projects/${ids[1]}`).expect(204);
    expect((await client.get('/api/v1/projects')).body).toEqual({
      projects: [expect.objectContaining({ name: 'one' }), expect.objectContaining({ name: 'three' })],
    });
    expect((await client.get('/api/v1/projects?skip=1&limit=1')).body.projects.map((p: { name: string }) => p.name)).toEqual([
      'three',
    ]);
    expect((await client.get('/api/v1/projects?limit=0')).status).toBe(422);
  });

  it('answers 422 for a query parameter it does not know, rather than ignore it', async () => {
    const res = await user().get('/api/v1/projects?offset=1');
    expect({ status: res.status, body: res.body }).toEqual({
      status: 422,
      body: { detail: [{ loc: ['query', 'offset'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }] },
    });
  });

  it('answers 422 in the documented shape for a malformed percent-escape in the path', async () => {
    const res = await user().get('/api/v1/projects/%ff');
    expect({ status: res.status, body: res.body }).toEqual({
      status: 422,
      body: {
        detail: [
          {
            loc: ['path'],
            msg: 'Must be percent-encoded UTF-8: an escape such as %ff decodes to no character',
            type: 'value_error',
          },
        ],
      },
    });
  });
});

describe('GET, PATCH and DELETE /api/v1/projects/{project_id}', () => {
  it('gets, updates and deletes a project', async () => {
    const project = (await user().post('/api/v1/projects', { name: 'Draft', description: 'First take' }).expect(201)).body;
    expect((await user().get(`/api/v1/projects/${project.id}`)).body).toEqual(project);
    expect((await user().patch(`/api/v1/projects/${project.id}`, { name: 'Final' })).body).toEqual({ ...project, name: 'Final' });
    expect((await user().patch(`/api/v1/projects/${project.id}`, { name: null, description: null })).body).toEqual({
      ...project,
      name: 'Final',
      description: null,
    });
    const deleted = await user().delete(`/api/v1/projects/${project.id}`);
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 204, text: '' });
    for (const call of [
      user().get(`/api/v1/projects/${project.id}`),
      user().patch(`/api/v1/projects/${project.id}`, { name: 'x' }),
    ]) {
      expect((await call).body).toEqual({ detail: 'Project not found' });
    }
    expect((await user().delete(`/api/v1/projects/${project.id}`)).status).toBe(404);
  });

  it('answers 404 for unknown ids and 422 for malformed ones', async () => {
    expect((await user().get(`/api/v1/projects/${MISSING}`)).status).toBe(404);
    const res = await user().patch('/api/v1/projects/123', { name: '' });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([
      ['path', 'project_id'],
      ['body', 'name'],
    ]);
  });
});
