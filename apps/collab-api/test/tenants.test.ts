import { randomUUID } from 'node:crypto';
import { as, createTestContext, type TestContext } from './context.js';
import { operatorToken, seedTenant, type TenantFixture } from './fixtures.js';

let ctx: TestContext;
let acme: TenantFixture;
let operator: ReturnType<typeof as>;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
  operator = as(ctx.app, operatorToken(ctx));
});
afterAll(() => ctx.close());

const MISSING = '0195a6c1-0000-7000-8000-000000000000';

describe('POST /api/v1/tenants', () => {
  it('creates a tenant', async () => {
    const res = await operator.post('/api/v1/tenants', { name: '  Globex  ' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Globex', created_at: expect.any(String), archived_at: null });
    expect((await operator.get(`/api/v1/tenants/${res.body.id}`)).body).toEqual(res.body);
  });

  it('creates the first Org admin with first_admin, who signs in by verified e-mail and runs the tenant', async () => {
    const email = `first-admin-${randomUUID().slice(0, 8)}@example.com`;
    const res = await operator.post('/api/v1/tenants', {
      name: 'Initech',
      first_admin: { email: email.toUpperCase(), name: 'Bill' },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['archived_at', 'created_at', 'id', 'name']);

    const bill = as(ctx.app, ctx.token(`idp|${randomUUID()}`, { email, emailVerified: true }));
    expect((await bill.get('/api/v1/users/me')).body).toMatchObject({
      tenant_id: res.body.id,
      email,
      name: 'Bill',
      role: 'Org admin',
    });
    expect((await bill.patch(`/api/v1/tenants/${res.body.id}`, { name: 'Initech Inc' })).status).toBe(200);
  });

  it('answers 422 naming each bad first_admin field, and creates no tenant', async () => {
    const res = await operator.post('/api/v1/tenants', { name: 'Hooli', first_admin: { email: 'not-an-email' } });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: string[] }) => issue.loc)).toEqual([
      ['body', 'first_admin', 'email'],
      ['body', 'first_admin', 'name'],
    ]);
    const { tenants } = (await operator.get('/api/v1/tenants?limit=1000')).body;
    expect(tenants.map((tenant: { name: string }) => tenant.name)).not.toContain('Hooli');
  });

  it('answers 422 for a missing or empty name', async () => {
    expect((await operator.post('/api/v1/tenants', {})).body).toEqual({
      detail: [{ loc: ['body', 'name'], msg: 'Field required', type: 'missing' }],
    });
    expect((await operator.post('/api/v1/tenants', { name: '' })).body.detail[0]).toMatchObject({
      loc: ['body', 'name'],
      type: 'string_too_short',
    });
  });
});

describe('GET /api/v1/tenants', () => {
  it('lists live tenants oldest first, with skip and limit', async () => {
    const created = [];
    for (const name of ['T1', 'T2', 'T3']) created.push((await operator.post('/api/v1/tenants', { name }).expect(201)).body);
    await operator.delete(`/api/v1/tenants/${created[1].id}`).expect(204);
    const { tenants } = (await operator.get('/api/v1/tenants?limit=1000')).body;
    const names = tenants.map((tenant: { name: string }) => tenant.name);
    expect(names.indexOf('Acme')).toBeLessThan(names.indexOf('T1'));
    expect(names.indexOf('T1')).toBeLessThan(names.indexOf('T3'));
    expect(names).not.toContain('T2');
    expect((await operator.get('/api/v1/tenants?skip=1&limit=1')).body.tenants).toEqual([tenants[1]]);
  });
});

describe('GET and PATCH /api/v1/tenants/{tenant_id}', () => {
  it('let an Org admin read and rename their own tenant, keeping the name when it is null', async () => {
    const admin = as(ctx.app, acme.admin.token);
    const tenant = (await admin.get(`/api/v1/tenants/${acme.id}`)).body;
    expect(tenant).toEqual({ id: acme.id, name: 'Acme', created_at: expect.any(String), archived_at: null });
    expect((await admin.patch(`/api/v1/tenants/${acme.id}`, { name: 'Acme Corp' })).body).toEqual({
      ...tenant,
      name: 'Acme Corp',
    });
    expect((await admin.patch(`/api/v1/tenants/${acme.id}`, { name: null })).body).toEqual({ ...tenant, name: 'Acme Corp' });
    expect((await admin.patch(`/api/v1/tenants/${acme.id}`, {})).body).toEqual({ ...tenant, name: 'Acme Corp' });
  });

  it('answer 404 for unknown tenants and 422 for malformed ids', async () => {
    expect((await operator.get(`/api/v1/tenants/${MISSING}`)).body).toEqual({ detail: 'Tenant not found' });
    expect((await operator.patch(`/api/v1/tenants/${MISSING}`, { name: 'x' })).status).toBe(404);
    expect((await operator.get('/api/v1/tenants/acme')).body.detail).toEqual([
      expect.objectContaining({ loc: ['path', 'tenant_id'], type: 'uuid_parsing' }),
    ]);
  });
});

describe('DELETE /api/v1/tenants/{tenant_id}', () => {
  it('archives the tenant: it disappears, and its users can no longer sign in', async () => {
    const doomed = await seedTenant(ctx, 'Doomed');
    expect((await as(ctx.app, doomed.user.token).get('/api/v1/users/me')).status).toBe(200);
    const res = await operator.delete(`/api/v1/tenants/${doomed.id}`);
    expect({ status: res.status, text: res.text }).toEqual({ status: 204, text: '' });
    expect((await operator.get(`/api/v1/tenants/${doomed.id}`)).status).toBe(404);
    expect((await operator.delete(`/api/v1/tenants/${doomed.id}`)).status).toBe(404);
    for (const member of [doomed.admin, doomed.user]) {
      const me = await as(ctx.app, member.token).get('/api/v1/users/me');
      expect({ status: me.status, body: me.body }).toEqual({ status: 401, body: { detail: 'Unknown user' } });
    }
  });
});
