/**
 * The role matrix: every operation the spec reserves to Org admins, and the tenant operations
 * reserved to platform operators, called by each of the three roles and by a platform operator
 * who is no tenant's user.
 */
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { as, createTestContext, type TestContext } from './context.js';
import { operatorToken, seedTenant, type TenantFixture } from './fixtures.js';

let ctx: TestContext;
let acme: TenantFixture;
beforeAll(async () => {
  ctx = await createTestContext();
  acme = await seedTenant(ctx, 'Acme');
});
afterAll(() => ctx.close());

type Caller = 'admin' | 'editor' | 'user' | 'operator';

/** Each call gets fresh targets, so that one caller's success does not change the next one's answer. */
const OPERATIONS: [string, (client: ReturnType<typeof as>) => Promise<Response>, Record<Caller, number>][] = [
  [
    'DELETE /api/v1/users/{user_id}',
    async (c) => c.delete(`/api/v1/users/${await newUserId()}`),
    { admin: 204, editor: 403, user: 403, operator: 401 },
  ],
  [
    'POST /api/v1/users/invite',
    (c) => c.post('/api/v1/users/invite', { email: `${randomUUID()}@acme.test`, name: 'Invitee' }),
    { admin: 201, editor: 403, user: 403, operator: 401 },
  ],
  [
    'PUT /api/v1/users/{user_id}/role',
    async (c) => c.put(`/api/v1/users/${await newUserId()}/role`, { role: 'Dataset editor' }),
    { admin: 200, editor: 403, user: 403, operator: 401 },
  ],
  [
    'POST /api/v1/tenants',
    (c) => c.post('/api/v1/tenants', { name: 'New tenant' }),
    { admin: 403, editor: 403, user: 403, operator: 201 },
  ],
  ['GET /api/v1/tenants', (c) => c.get('/api/v1/tenants'), { admin: 403, editor: 403, user: 403, operator: 200 }],
  [
    'GET /api/v1/tenants/{own tenant}',
    (c) => c.get(`/api/v1/tenants/${acme.id}`),
    { admin: 200, editor: 403, user: 403, operator: 200 },
  ],
  [
    'PATCH /api/v1/tenants/{own tenant}',
    (c) => c.patch(`/api/v1/tenants/${acme.id}`, { name: 'Acme' }),
    { admin: 200, editor: 403, user: 403, operator: 200 },
  ],
  [
    'DELETE /api/v1/tenants/{tenant_id}',
    async (c) => c.delete(`/api/v1/tenants/${(await ctx.db.tenant.create({ data: { name: 'Disposable' } })).id}`),
    { admin: 403, editor: 403, user: 403, operator: 204 },
  ],
];

async function newUserId(): Promise<string> {
  const res = await as(ctx.app, acme.admin.token).post('/api/v1/users', { email: `${randomUUID()}@acme.test`, name: 'Target' });
  return res.body.id;
}

function tokenOf(caller: Caller): string {
  return caller === 'operator' ? operatorToken(ctx) : acme[caller].token;
}

describe.each(OPERATIONS)('%s', (_operation, call, expected) => {
  it.each(Object.entries(expected))('answers %s with %i', async (caller, status) => {
    const res = await call(as(ctx.app, tokenOf(caller as Caller)));
    expect(res.status).toBe(status);
    if (status >= 400) expect(res.body).toEqual({ detail: expect.any(String) });
  });
});

it('checks the role before the input: an invalid body from a Dataset user is 403, not 422', async () => {
  const res = await as(ctx.app, acme.user.token).post('/api/v1/users/invite', { email: 'nonsense' });
  expect({ status: res.status, body: res.body }).toEqual({ status: 403, body: { detail: 'Only an Org admin may do this' } });
});

it('lets a platform operator who is also a user act as both', async () => {
  const token = ctx.token(acme.editor.sub, { platformAdmin: true });
  expect((await as(ctx.app, token).get('/api/v1/tenants')).status).toBe(200);
  expect((await as(ctx.app, token).get('/api/v1/users/me')).body.id).toBe(acme.editor.id);
  expect((await as(ctx.app, token).post('/api/v1/users/invite', { email: `${randomUUID()}@acme.test`, name: 'x' })).status).toBe(
    403,
  );
});
