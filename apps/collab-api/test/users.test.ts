import { randomUUID } from 'node:crypto';
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
const admin = () => as(ctx.app, acme.admin.token);
const editor = () => as(ctx.app, acme.editor.token);
const user = () => as(ctx.app, acme.user.token);
const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

/** A token for a new identity, as the identity provider would issue it at first sign-in. */
const firstSignIn = (email: string, verified = true) => ctx.token(`idp|${randomUUID()}`, { email, emailVerified: verified });

describe('GET /api/v1/users/me', () => {
  it('returns the calling user', async () => {
    expect((await user().get('/api/v1/users/me')).body).toEqual({
      id: acme.user.id,
      tenant_id: acme.id,
      email: acme.user.email,
      name: 'user',
      role: 'Dataset user',
      identity_provider_id: acme.user.sub,
      created_at: expect.any(String),
    });
  });
});

describe('GET /api/v1/users', () => {
  it("lists the tenant's live users oldest first, with skip and limit", async () => {
    const { users } = (await user().get('/api/v1/users')).body;
    expect(users.slice(0, 3).map((u: { id: string }) => u.id)).toEqual([acme.admin.id, acme.editor.id, acme.user.id]);
    expect((await user().get('/api/v1/users?skip=1&limit=1')).body.users).toEqual([users[1]]);
  });
});

describe('POST /api/v1/users', () => {
  it('creates an unlinked user with the default role, e-mail lower-cased (Org admins only)', async () => {
    const email = uniqueEmail('New');
    const res = await admin().post('/api/v1/users', { email, name: 'Newcomer' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: acme.id,
      email: email.toLowerCase(),
      name: 'Newcomer',
      role: 'Dataset user',
      identity_provider_id: null,
      created_at: expect.any(String),
    });
  });

  it('is refused with 403 to every other role, before the input is read', async () => {
    for (const client of [user(), editor()]) {
      const res = await client.post('/api/v1/users', { email: uniqueEmail('nope'), name: 'Nope' });
      expect({ status: res.status, body: res.body }).toEqual({ status: 403, body: { detail: 'Only an Org admin may do this' } });
      expect((await client.post('/api/v1/users', { email: 'not-an-address' })).status).toBe(403);
    }
  });

  it("answers 409 for an e-mail of the tenant's users, whatever its case, until that user is deleted", async () => {
    const email = uniqueEmail('dup');
    const first = (await admin().post('/api/v1/users', { email, name: 'First' }).expect(201)).body;
    const res = await admin().post('/api/v1/users', { email: email.toUpperCase(), name: 'Second' });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 409,
      body: { detail: `A user with the e-mail ${email.toUpperCase().toLowerCase()} already exists in this tenant` },
    });
    await admin().delete(`/api/v1/users/${first.id}`).expect(204);
    await admin().post('/api/v1/users', { email, name: 'Second' }).expect(201);
  });

  it('answers 422 naming each invalid field', async () => {
    const res = await admin().post('/api/v1/users', { email: 'not-an-address', role: 'Boss' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'email'], type: 'value_error' }),
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
      expect.objectContaining({ loc: ['body', 'role'], type: 'enum' }),
    ]);
  });
});

describe('signing in links a created or invited user by verified e-mail', () => {
  it('links the user to the first token with that verified e-mail, and only to it', async () => {
    const email = uniqueEmail('link');
    const invited = (await admin().post('/api/v1/users/invite', { email, name: 'Invitee', role: 'Dataset editor' })).body;
    expect(invited).toMatchObject({ role: 'Dataset editor', identity_provider_id: null });

    expect((await as(ctx.app, firstSignIn(email, false)).get('/api/v1/users/me')).status).toBe(401);
    const sub = `idp|${randomUUID()}`;
    const me = await as(ctx.app, ctx.token(sub, { email: email.toUpperCase() })).get('/api/v1/users/me');
    expect(me.body).toEqual({ ...invited, identity_provider_id: sub });
    // Linked now: the same `sub` signs in without an e-mail, another one with the e-mail does not.
    expect((await as(ctx.app, ctx.token(sub)).get('/api/v1/users/me')).body.id).toBe(invited.id);
    expect((await as(ctx.app, firstSignIn(email)).get('/api/v1/users/me')).status).toBe(401);
  });

  it('links once when the first requests with a new identity arrive together', async () => {
    const email = uniqueEmail('race');
    const invited = (await admin().post('/api/v1/users/invite', { email, name: 'Racer' })).body;
    const token = firstSignIn(email);
    const answers = await Promise.all(Array.from({ length: 5 }, () => as(ctx.app, token).get('/api/v1/users/me')));
    expect(answers.map((res) => [res.status, res.body.id])).toEqual(Array.from({ length: 5 }, () => [200, invited.id]));
  });

  it('does not link a token whose e-mail only lower-cases (in Unicode) to the invited one', async () => {
    const email = uniqueEmail('kate');
    const invited = (await admin().post('/api/v1/users/invite', { email, name: 'Kate', role: 'Org admin' })).body;
    // U+212A KELVIN SIGN lower-cases to an ASCII `k`; a NUL cannot be stored. Neither is Kate's address.
    for (const forged of [email.replace(/^k/, '\u212A'), `${email}\u0000`]) {
      expect((await as(ctx.app, firstSignIn(forged)).get('/api/v1/users/me')).status).toBe(401);
    }
    expect((await as(ctx.app, firstSignIn(email)).get('/api/v1/users/me')).body.id).toBe(invited.id);
  });

  it('does not link a deleted user', async () => {
    const email = uniqueEmail('gone');
    const deleted = (await admin().post('/api/v1/users', { email, name: 'Gone' })).body;
    await admin().delete(`/api/v1/users/${deleted.id}`).expect(204);
    expect((await as(ctx.app, firstSignIn(email)).get('/api/v1/users/me')).status).toBe(401);
  });

  it('asks for X-Tenant-Id when several tenants await the e-mail, naming none of them, and links the one named', async () => {
    const email = uniqueEmail('many');
    const other = await seedTenant(ctx, 'Other');
    const inAcme = (await admin().post('/api/v1/users', { email, name: 'In Acme' })).body;
    const inOther = (await as(ctx.app, other.admin.token).post('/api/v1/users', { email, name: 'In Other' })).body;
    const token = firstSignIn(email);

    const ambiguous = await as(ctx.app, token).get('/api/v1/users/me');
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.detail).toMatch(/X-Tenant-Id/);
    expect(JSON.stringify(ambiguous.body)).not.toMatch(new RegExp(`${acme.id}|${other.id}|Acme|Other`));
    expect((await as(ctx.app, token).get('/api/v1/users/me').set('X-Tenant-Id', 'not-a-uuid')).status).toBe(422);
    expect((await as(ctx.app, token).get('/api/v1/users/me').set('X-Tenant-Id', MISSING)).status).toBe(401);

    const chosen = await as(ctx.app, token).get('/api/v1/users/me').set('X-Tenant-Id', other.id);
    expect(chosen.body.id).toBe(inOther.id);
    // Linked: the header no longer matters, and Acme's invitation stays pending for another identity.
    expect((await as(ctx.app, token).get('/api/v1/users/me')).body.id).toBe(inOther.id);
    expect((await admin().get(`/api/v1/users/${inAcme.id}`)).body.identity_provider_id).toBeNull();
  });

  it("cannot be hijacked by another tenant: no user can pre-create someone's account, and archiving releases the identity", async () => {
    const email = uniqueEmail('victim');
    const attacker = await seedTenant(ctx, 'Attacker');
    // The attack of issue 9: a Dataset user of another tenant pre-creating the victim's user.
    expect((await as(ctx.app, attacker.user.token).post('/api/v1/users', { email, name: 'Victim' })).status).toBe(403);
    // Even an Org admin of that tenant doing so cannot capture the sign-in: it is ambiguous, and the victim chooses.
    const trap = (await as(ctx.app, attacker.admin.token).post('/api/v1/users', { email, name: 'Victim' })).body;
    const invitation = (await admin().post('/api/v1/users/invite', { email, name: 'Victim' })).body;
    const victim = firstSignIn(email);
    expect((await as(ctx.app, victim).get('/api/v1/users/me')).status).toBe(409);
    expect((await as(ctx.app, victim).get('/api/v1/users/me').set('X-Tenant-Id', acme.id)).body.id).toBe(invitation.id);

    // Archived, the user no longer holds the identity: the person can accept another invitation.
    await admin().delete(`/api/v1/users/${invitation.id}`).expect(204);
    expect((await ctx.db.user.findUniqueOrThrow({ where: { id: invitation.id } })).identityProviderId).toBeNull();
    expect((await as(ctx.app, victim).get('/api/v1/users/me')).body.id).toBe(trap.id);
  });
});

describe('a tenant keeps at least one Org admin', () => {
  it('refuses to demote or delete the last Org admin, whoever asks', async () => {
    const solo = await seedTenant(ctx, 'Solo');
    const other = (
      await as(ctx.app, solo.admin.token).post('/api/v1/users', { email: uniqueEmail('o'), name: 'O', role: 'Org admin' })
    ).body;
    await as(ctx.app, solo.admin.token).delete(`/api/v1/users/${other.id}`).expect(204);
    // Only solo.admin is left: they cannot demote or delete themselves, and nobody else can either.
    expect(
      (await as(ctx.app, solo.admin.token).put(`/api/v1/users/${solo.admin.id}/role`, { role: 'Dataset user' })).status,
    ).toBe(409);
    expect((await as(ctx.app, solo.admin.token).delete(`/api/v1/users/${solo.admin.id}`)).status).toBe(409);
  });

  it('holds when two Org admins demote or delete each other at the same moment', async () => {
    for (let round = 0; round < 5; round++) {
      const tenant = await seedTenant(ctx, `Pair ${round}`);
      const second = (
        await as(ctx.app, tenant.admin.token).post('/api/v1/users', { email: uniqueEmail('b'), name: 'B', role: 'Org admin' })
      ).body;
      const secondToken = ctx.token(`idp|${randomUUID()}`, { email: second.email });
      await as(ctx.app, secondToken).get('/api/v1/users/me').expect(200);
      const [byFirst, bySecond] = await Promise.all([
        round % 2 === 0
          ? as(ctx.app, tenant.admin.token).put(`/api/v1/users/${second.id}/role`, { role: 'Dataset user' })
          : as(ctx.app, tenant.admin.token).delete(`/api/v1/users/${second.id}`),
        as(ctx.app, secondToken).delete(`/api/v1/users/${tenant.admin.id}`),
      ]);
      // One of them wins; the other, no longer an Org admin (or no longer a user), is refused.
      expect([byFirst.status, bySecond.status].filter((status) => status < 300)).toHaveLength(1);
      const admins = await ctx.db.user.count({ where: { tenantId: tenant.id, role: 'OrgAdmin', archivedAt: null } });
      expect(admins).toBe(1);
    }
  });
});

describe('GET /api/v1/users/{user_id}', () => {
  it('gets a user of the tenant; 404 for unknown ids, 422 for malformed ones', async () => {
    expect((await user().get(`/api/v1/users/${acme.admin.id}`)).body).toMatchObject({ id: acme.admin.id, role: 'Org admin' });
    expect((await user().get(`/api/v1/users/${MISSING}`)).body).toEqual({ detail: 'User not found' });
    expect((await user().get('/api/v1/users/someone')).body.detail).toEqual([
      expect.objectContaining({ loc: ['path', 'user_id'] }),
    ]);
  });
});

describe('PUT /api/v1/users/{user_id}', () => {
  it('lets users update themselves, without changing their role', async () => {
    const me = await seedTenant(ctx, 'Self service');
    const self = as(ctx.app, me.user.token);
    const email = uniqueEmail('self');
    const res = await self.put(`/api/v1/users/${me.user.id}`, { email, name: 'Renamed', role: 'Dataset user' });
    expect(res.body).toMatchObject({ id: me.user.id, email, name: 'Renamed', role: 'Dataset user' });
    expect((await self.put(`/api/v1/users/${me.user.id}`, { email, name: 'x', role: 'Dataset editor' })).body).toEqual({
      detail: 'Only an Org admin may change roles',
    });
    expect((await self.put(`/api/v1/users/${me.editor.id}`, { email: uniqueEmail('o'), name: 'x' })).body).toEqual({
      detail: 'Only an Org admin may update other users',
    });
  });

  it("lets Org admins update anyone's e-mail, name and role, except their own role (409)", async () => {
    const team = await seedTenant(ctx, 'Team');
    const boss = as(ctx.app, team.admin.token);
    const res = await boss.put(`/api/v1/users/${team.user.id}`, { email: team.user.email, name: 'Promoted', role: 'Org admin' });
    expect(res.body).toMatchObject({ name: 'Promoted', role: 'Org admin' });
    const own = await boss.put(`/api/v1/users/${team.admin.id}`, { email: team.admin.email, name: 'Boss', role: 'Dataset user' });
    expect({ status: own.status, body: own.body }).toEqual({
      status: 409,
      body: { detail: 'You cannot change your own role; another Org admin can' },
    });
    expect((await boss.put(`/api/v1/users/${team.admin.id}`, { email: team.admin.email, name: 'Boss' })).status).toBe(200);
    expect((await boss.put(`/api/v1/users/${team.editor.id}`, { email: team.admin.email, name: 'Clash' })).status).toBe(409);
    expect((await boss.put(`/api/v1/users/${MISSING}`, { email: uniqueEmail('m'), name: 'M' })).status).toBe(404);
    expect((await boss.put(`/api/v1/users/${team.editor.id}`, { name: 'No e-mail' })).body.detail).toEqual([
      { loc: ['body', 'email'], msg: 'Field required', type: 'missing' },
    ]);
  });
});

describe('PUT /api/v1/users/{user_id}/role', () => {
  it("changes a user's role; not one's own (409)", async () => {
    const team = await seedTenant(ctx, 'Roles');
    const boss = as(ctx.app, team.admin.token);
    expect((await boss.put(`/api/v1/users/${team.user.id}/role`, { role: 'Dataset editor' })).body).toMatchObject({
      id: team.user.id,
      role: 'Dataset editor',
    });
    expect((await as(ctx.app, team.user.token).get('/api/v1/users/me')).body.role).toBe('Dataset editor');
    expect((await boss.put(`/api/v1/users/${team.admin.id}/role`, { role: 'Dataset user' })).status).toBe(409);
    expect((await boss.put(`/api/v1/users/${team.admin.id}/role`, { role: 'Org admin' })).status).toBe(200);
    expect((await boss.put(`/api/v1/users/${team.user.id}/role`, {})).body.detail).toEqual([
      { loc: ['body', 'role'], msg: 'Field required', type: 'missing' },
    ]);
    expect((await boss.put(`/api/v1/users/${MISSING}/role`, { role: 'Org admin' })).status).toBe(404);
  });
});

describe('DELETE /api/v1/users/{user_id}', () => {
  it('archives the user, who can no longer sign in; nobody deletes themselves (409)', async () => {
    const team = await seedTenant(ctx, 'Leavers');
    const boss = as(ctx.app, team.admin.token);
    const res = await boss.delete(`/api/v1/users/${team.editor.id}`);
    expect({ status: res.status, text: res.text }).toEqual({ status: 204, text: '' });
    expect((await boss.get(`/api/v1/users/${team.editor.id}`)).status).toBe(404);
    expect((await boss.get('/api/v1/users')).body.users.map((u: { id: string }) => u.id)).not.toContain(team.editor.id);
    expect((await as(ctx.app, team.editor.token).get('/api/v1/users/me')).status).toBe(401);
    expect((await boss.delete(`/api/v1/users/${team.editor.id}`)).status).toBe(404);
    const self = await boss.delete(`/api/v1/users/${team.admin.id}`);
    expect({ status: self.status, body: self.body }).toEqual({
      status: 409,
      body: { detail: 'You cannot delete yourself; another Org admin can' },
    });
  });
});
