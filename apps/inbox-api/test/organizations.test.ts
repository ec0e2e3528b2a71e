import request from 'supertest';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from './api-keys/helpers.js';
import { createEmbeddedTestContext, createTestContext, type TestContext } from './context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY });
});
afterAll(() => ctx.close());

const operator = () => as(ctx.app, OPERATOR_KEY);

describe('organizations, for operators', () => {
  it('are created, listed newest first, got and deleted', async () => {
    const created = await operator().post('/v1/organizations', { name: '  Acme agents  ' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme agents',
      sending_enabled: true,
      created_at: expect.any(String),
    });
    expect(new Date(created.body.created_at).toISOString()).toBe(created.body.created_at);
    const second = await createOrganization(ctx.app, 'Second');

    const list = await operator().get('/v1/organizations');
    expect(list.status).toBe(200);
    expect(list.body.items.map((organization: { id: string }) => organization.id).slice(0, 2)).toEqual([
      second.id,
      created.body.id,
    ]);
    expect(list.body.items.at(-1)).toMatchObject({ id: 'default', name: 'default' });
    expect(list.body).toMatchObject({ count: list.body.items.length, total: list.body.items.length });
    expect((await operator().get('/v1/organizations?limit=1&offset=1')).body.items).toEqual([created.body]);

    expect((await operator().get(`/v1/organizations/${created.body.id}`)).body).toEqual(created.body);
    await operator().delete(`/v1/organizations/${created.body.id}`).expect(204);
    expect((await operator().get(`/v1/organizations/${created.body.id}`)).body.error.code).toBe('not_found');
    expect((await operator().delete(`/v1/organizations/${created.body.id}`)).status).toBe(404);
  });

  it('always include `default`, which holds inboxes made without an organization and cannot be deleted', async () => {
    expect((await operator().get('/v1/organizations/default')).body).toMatchObject({ id: 'default', name: 'default' });
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'in-default' });
    expect(inbox.organization_id).toBe('default');
    const refused = await operator().delete('/v1/organizations/default');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', message: 'The default organization cannot be deleted' });
  });

  it('refuse to be deleted (409) while they have inboxes, also one being deleted', async () => {
    const organization = await createOrganization(ctx.app, 'Busy');
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'busy', organization_id: organization.id });
    expect(inbox.organization_id).toBe(organization.id);
    expect((await operator().get(`/v1/inboxes/${inbox.id}`)).body.organization_id).toBe(organization.id);
    const refused = await operator().delete(`/v1/organizations/${organization.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe('The organization still has inboxes: delete them first');

    // An inbox marked deleted whose rows are not removed yet (a crash in between) still counts.
    await ctx.db.inbox.update({ where: { id: inbox.id }, data: { deletedAt: new Date() } });
    expect((await operator().delete(`/v1/organizations/${organization.id}`)).status).toBe(409);
    await ctx.db.inbox.delete({ where: { id: inbox.id } });
    await operator().delete(`/v1/organizations/${organization.id}`).expect(204);
  });

  it('take their API keys with them: refused at once', async () => {
    const organization = await createOrganization(ctx.app, 'Leaving');
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
    await as(ctx.app, key.key).get('/v1/inboxes').expect(200);
    await operator().delete(`/v1/organizations/${organization.id}`).expect(204);
    expect((await as(ctx.app, key.key).get('/v1/inboxes')).status).toBe(401);
    expect(await ctx.db.apiKey.count({ where: { organizationId: organization.id } })).toBe(0);
  });

  it('answer 404, never 500, to a key, webhook or list entry made for one while it is deleted', async () => {
    for (let round = 0; round < 10; round++) {
      const { id } = await createOrganization(ctx.app, `Racing ${round}`);
      const [deleted, ...made] = await Promise.all([
        operator().delete(`/v1/organizations/${id}`),
        operator().post('/v1/lists', { organization_id: id, direction: 'send', type: 'block', entry: 'q.example' }),
        operator().post('/v1/api-keys', { name: 'Racing', organization_id: id, permissions: ['read'] }),
        operator().post('/v1/webhooks', {
          url: 'https://hooks.example.com/r',
          event_types: ['message.sent'],
          organization_id: id,
        }),
      ]);
      expect(deleted.status).toBe(204);
      for (const res of made) expect([201, 404]).toContain(res.status);
    }
    expect(await ctx.db.listEntry.count({ where: { entry: 'q.example' } })).toBe(0);
  });

  it('put inboxes where the operator says, and answer 404 for an organization that does not exist', async () => {
    const organization = await createOrganization(ctx.app, 'Target');
    const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'targeted', organization_id: organization.id });
    expect(inbox.organization_id).toBe(organization.id);
    for (const organizationId of ['00000000-0000-0000-0000-000000000000', 'nope', "x' OR '1'='1"]) {
      const res = await operator().post('/v1/inboxes', { name: 'x', email_username: 'nowhere', organization_id: organizationId });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { organization_id: organizationId } });
    }
  });

  it('refuse bad input with 400 and the field', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'a'.repeat(201) },
      { name: 'line\nbreak' },
      { name: 'nul\u0000' },
      { name: 42 },
      { name: ['x'] },
      { name: 'ok', extra: true },
    ]) {
      const res = await operator().post('/v1/organizations', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    expect((await operator().get('/v1/organizations?limit=0')).status).toBe(400);
    expect((await operator().get('/v1/organizations?limit=abc')).status).toBe(400);
    // Text that only looks like SQL is a name like any other.
    const sql = await operator().post('/v1/organizations', { name: "Robert'); DROP TABLE organizations;--" });
    expect(sql.status).toBe(201);
    expect((await operator().get(`/v1/organizations/${sql.body.id}`)).body.name).toBe("Robert'); DROP TABLE organizations;--");
    for (const id of ['not-an-id', 'DEFAULT', 'a'.repeat(100)]) {
      expect((await operator().get(`/v1/organizations/${id}`)).status).toBe(404);
    }
    for (const id of ['%00', 'a'.repeat(101)]) expect((await operator().get(`/v1/organizations/${id}`)).status).toBe(400);
  });
});

describe('organizations, for API keys', () => {
  it('are theirs alone to see; creating and deleting them is for operators (403)', async () => {
    const mine = await createOrganization(ctx.app, 'Mine');
    const theirs = await createOrganization(ctx.app, 'Theirs');
    const key = await createKey(ctx.app, OPERATOR_KEY, {
      organization_id: mine.id,
      permissions: ['read', 'send', 'manage', 'approve'],
    });
    const client = as(ctx.app, key.key);

    const list = await client.get('/v1/organizations');
    expect(list.body).toEqual({ items: [expect.objectContaining({ id: mine.id })], count: 1, total: 1, next_page_token: null });
    expect((await client.get(`/v1/organizations/${mine.id}`)).status).toBe(200);
    expect((await client.get(`/v1/organizations/${theirs.id}`)).status).toBe(404);
    expect((await client.get('/v1/organizations/default')).status).toBe(404);
    // A page token's text key holding a NUL (no text Postgres holds) is a bad token, not a 500.
    const nul = Buffer.from(JSON.stringify(['organizations', { t: '2030-01-01T00:00:00.000Z' }, 'x\u0000'])).toString(
      'base64url',
    );
    expect((await client.get(`/v1/organizations?page_token=${nul}`)).body.error).toMatchObject({ code: 'bad_request' });

    const create = await client.post('/v1/organizations', { name: 'Escalated' });
    expect(create.status).toBe(403);
    expect(create.body.error).toMatchObject({ code: 'forbidden', message: 'Only operator keys (INBOX_API_KEYS) may do this' });
    // Whatever the organization: the operation is not a key's.
    expect((await client.delete(`/v1/organizations/${theirs.id}`)).status).toBe(403);
    expect((await client.delete(`/v1/organizations/${mine.id}`)).status).toBe(403);
    await operator().get(`/v1/organizations/${theirs.id}`).expect(200);
  });
});

describe('open mode (no INBOX_API_KEYS)', () => {
  it('lets anyone act as an operator, as before keys existed', async () => {
    const open = await ctx.replica({ INBOX_API_KEYS: '' });
    try {
      const organization = await request(open.app).post('/v1/organizations').send({ name: 'Local' }).expect(201);
      const inbox = await request(open.app)
        .post('/v1/inboxes')
        .send({ name: 'Local', email_username: 'open-local', organization_id: organization.body.id })
        .expect(201);
      expect(inbox.body.organization_id).toBe(organization.body.id);
      expect(
        (await request(open.app).post('/v1/inboxes').send({ name: 'x', email_username: 'open-default' })).body.organization_id,
      ).toBe('default');
    } finally {
      await open.close();
    }
  });
});

describe('on the embedded database (PGlite)', () => {
  it('starts with the migration applied: `default` exists and holds new inboxes, organizations and keys work', async () => {
    const embedded = await createEmbeddedTestContext({ INBOX_API_KEYS: OPERATOR_KEY });
    try {
      const client = as(embedded.app, OPERATOR_KEY);
      expect((await client.get('/v1/organizations')).body).toMatchObject({
        items: [{ id: 'default', name: 'default' }],
        total: 1,
      });
      const organization = await createOrganization(embedded.app, 'Embedded');
      const inDefault = await createInbox(embedded.app, OPERATOR_KEY, { email_username: 'embedded-default' });
      const inOrganization = await createInbox(embedded.app, OPERATOR_KEY, {
        email_username: 'embedded-org',
        organization_id: organization.id,
      });
      expect([inDefault.organization_id, inOrganization.organization_id]).toEqual(['default', organization.id]);
      const key = await createKey(embedded.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
      const seen = await as(embedded.app, key.key).get('/v1/inboxes');
      expect(seen.body).toMatchObject({ items: [{ id: inOrganization.id }], total: 1 });
      expect((await as(embedded.app, key.key).get(`/v1/inboxes/${inDefault.id}`)).status).toBe(404);
      expect((await client.delete(`/v1/organizations/${organization.id}`)).status).toBe(409);
    } finally {
      await embedded.close();
    }
    // PGlite boots and migrates in WebAssembly: past 30 s on a loaded 2-core machine (a fresh-clone CI run), as in the other embedded tests.
  }, 120_000);
});
