import type { Response } from 'supertest';
import { as, createTestContext, type TestContext } from './context.js';
import { seedTenant, type TenantFixture } from './fixtures.js';
import { openWarehouseCatalog, type WarehouseCatalog } from './warehouse-catalog.js';

let ctx: TestContext;
let acme: TenantFixture;
let catalog: WarehouseCatalog;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
  catalog = await openWarehouseCatalog(ctx.dataDir);
});
afterAll(async () => {
  await ctx.close();
  catalog.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '0195a6c1-0000-7000-8000-000000000000';

const editor = () => as(ctx.app, acme.editor.token);

async function newProject(name = 'Analytics'): Promise<string> {
  return (await editor().post('/api/v1/projects', { name }).expect(201)).body.id;
}

async function newDataset(projectId: string, name: string, description?: string) {
  return (await editor().post('/api/v1/datasets', { name, description, project_id: projectId }).expect(201)).body;
}

describe('POST /api/v1/datasets', () => {
  it('creates the dataset in the project, and in the warehouse', async () => {
    const projectId = await newProject();
    const res = await editor().post('/api/v1/datasets', {
      name: 'Sales',
      description: 'Orders and refunds',
      project_id: projectId,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      tenant_id: acme.id,
      project_id: projectId,
      name: 'Sales',
      description: 'Orders and refunds',
      share_policy: { allow_exports: true },
      created_at: expect.any(String),
      archived_at: null,
    });
    expect(await catalog.datasetExists(res.body.id)).toBe(true);
    expect((await editor().get(`/api/v1/datasets/${res.body.id}`)).body).toEqual(res.body);
  });

  it('defaults the description to null', async () => {
    const dataset = await newDataset(await newProject(), 'No description');
    expect(dataset.description).toBeNull();
  });

  it('answers 404 for a project that does not exist or is deleted, and creates nothing', async () => {
    const projectId = await newProject('Short-lived');
    await editor().delete(`/api/v1/projects/${projectId}`).expect(204);
    for (const id of [MISSING, projectId]) {
      const res = await editor().post('/api/v1/datasets', { name: 'Orphan', project_id: id });
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { detail: 'Project not found' } });
    }
    expect(await ctx.db.dataset.count({ where: { name: 'Orphan' } })).toBe(0);
  });

  it('answers 409 for a name the project already has, whatever its case, and not for another project', async () => {
    const projectId = await newProject();
    await newDataset(projectId, 'Events');
    const res = await editor().post('/api/v1/datasets', { name: 'EVENTS', project_id: projectId });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 409,
      body: { detail: 'The project already has a dataset named "EVENTS"' },
    });
    await newDataset(await newProject(), 'Events');
  });

  it('frees the name of a deleted dataset', async () => {
    const projectId = await newProject();
    const first = await newDataset(projectId, 'Reused');
    await editor().delete(`/api/v1/datasets/${first.id}`).expect(204);
    await newDataset(projectId, 'Reused');
  });

  it('answers 422 with the loc of every invalid field', async () => {
    const res = await editor().post('/api/v1/datasets', { name: ' ', description: 7, project_id: 'nope', extra: true });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'name'], type: 'string_too_short' }),
        expect.objectContaining({ loc: ['body', 'description'], type: 'string_type' }),
        expect.objectContaining({ loc: ['body', 'project_id'], type: 'uuid_parsing' }),
        expect.objectContaining({ loc: ['body', 'extra'], type: 'extra_forbidden' }),
      ]),
    );
    const missing = await editor().post('/api/v1/datasets', {});
    expect(missing.body.detail).toEqual([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'project_id'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('refuses names with control characters and names over 200 characters', async () => {
    const projectId = await newProject();
    for (const name of ['tab\there', 'x'.repeat(201)]) {
      const res = await editor().post('/api/v1/datasets', { name, project_id: projectId });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'name']);
    }
  });
});

describe('GET /api/v1/datasets and /api/v1/projects/{project_id}/datasets', () => {
  it("list the tenant's and the project's live datasets, oldest first, with skip and limit", async () => {
    // Lists are scoped to the caller's tenant: a tenant of its own starts with none.
    const tenant = await seedTenant(ctx, 'Lists');
    const call = (path: string) => as(ctx.app, tenant.user.token).get(path);
    const post = (path: string, body: object) => as(ctx.app, tenant.user.token).post(path, body).expect(201);
    const [p1, p2] = [
      (await post('/api/v1/projects', { name: 'P1' })).body.id,
      (await post('/api/v1/projects', { name: 'P2' })).body.id,
    ];
    for (const [project, name] of [
      [p1, 'a'],
      [p2, 'b'],
      [p1, 'c'],
      [p1, 'd'],
    ])
      await post('/api/v1/datasets', { name, project_id: project });
    const names = (res: Response) => res.body.datasets.map((d: { name: string }) => d.name);
    expect(names(await call('/api/v1/datasets'))).toEqual(['a', 'b', 'c', 'd']);
    expect(names(await call('/api/v1/datasets?skip=1&limit=2'))).toEqual(['b', 'c']);
    expect(names(await call(`/api/v1/projects/${p1}/datasets`))).toEqual(['a', 'c', 'd']);
    expect(names(await call(`/api/v1/projects/${p1}/datasets?skip=2`))).toEqual(['d']);
    expect((await call(`/api/v1/projects/${MISSING}/datasets`)).status).toBe(404);
    const tooMany = await call('/api/v1/datasets?limit=1001');
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail).toEqual([
      { loc: ['query', 'limit'], msg: 'Input should be less than or equal to 1000', type: 'less_than_equal' },
    ]);
  });
});

describe('GET /api/v1/datasets/{dataset_id}', () => {
  it('answers 404 for an unknown id and 422 for a malformed one', async () => {
    expect((await editor().get(`/api/v1/datasets/${MISSING}`)).body).toEqual({ detail: 'Dataset not found' });
    const res = await editor().get('/api/v1/datasets/not-a-uuid');
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['path', 'dataset_id'], type: 'uuid_parsing' })]);
  });
});

describe('PATCH /api/v1/datasets/{dataset_id}', () => {
  it('renames, describes and moves the dataset; absent fields stay, a null description is removed', async () => {
    const [from, to] = [await newProject('From'), await newProject('To')];
    const dataset = await newDataset(from, 'Before', 'Old text');
    const renamed = await editor().patch(`/api/v1/datasets/${dataset.id}`, { name: 'After', project_id: null });
    expect(renamed.body).toEqual({ ...dataset, name: 'After' });
    const moved = await editor().patch(`/api/v1/datasets/${dataset.id}`, { description: null, project_id: to });
    expect(moved.body).toEqual({ ...dataset, name: 'After', description: null, project_id: to });
    expect(await catalog.datasetExists(dataset.id)).toBe(true);
  });

  it('answers 404 for a project that is not there, and 409 for a name taken in the target project', async () => {
    const [from, to] = [await newProject(), await newProject()];
    const dataset = await newDataset(from, 'Mover');
    await newDataset(to, 'mover');
    expect((await editor().patch(`/api/v1/datasets/${dataset.id}`, { project_id: MISSING })).status).toBe(404);
    expect((await editor().patch(`/api/v1/datasets/${dataset.id}`, { project_id: to })).status).toBe(409);
    expect((await editor().get(`/api/v1/datasets/${dataset.id}`)).body.project_id).toBe(from);
  });
});

describe('DELETE /api/v1/datasets/{dataset_id}', () => {
  it('answers 204, archives the dataset with its tables, and drops it from the warehouse', async () => {
    const dataset = await newDataset(await newProject(), 'Doomed');
    const table = (
      await editor()
        .post('/api/v1/tables', { name: 't', schema: [{ name: 'id', type: 'INT64' }], dataset_id: dataset.id })
        .expect(201)
    ).body;
    const res = await editor().delete(`/api/v1/datasets/${dataset.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await editor().get(`/api/v1/datasets/${dataset.id}`)).status).toBe(404);
    expect((await editor().get(`/api/v1/tables/${table.id}`)).status).toBe(404);
    expect((await editor().get('/api/v1/datasets')).body.datasets.map((d: { id: string }) => d.id)).not.toContain(dataset.id);
    expect(await catalog.datasetExists(dataset.id)).toBe(false);
    const rows = await ctx.db.dataset.findUniqueOrThrow({ where: { id: dataset.id }, include: { tables: true } });
    expect(rows.archivedAt).toBeInstanceOf(Date);
    expect(rows.tables.map((t) => t.archivedAt)).toEqual([expect.any(Date)]);
    expect((await editor().delete(`/api/v1/datasets/${dataset.id}`)).status).toBe(404);
  });

  it('is refused for the project while it has datasets (409)', async () => {
    const projectId = await newProject();
    await newDataset(projectId, 'Keeps the project');
    const res = await editor().delete(`/api/v1/projects/${projectId}`);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 409,
      body: { detail: 'The project still has 1 dataset(s); delete them first' },
    });
  });
});
