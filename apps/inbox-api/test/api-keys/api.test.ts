import request from 'supertest';
import { newSecret } from '../../src/api-keys/secrets.js';
import { createTestContext, type TestContext } from '../context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ALL = ['read', 'send', 'manage', 'approve'];

let ctx: TestContext;
let organization: { id: string };
let inbox1: { id: string; email_address: string };
let inbox2: { id: string; email_address: string };
beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY, INBOX_RATE_LIMIT_PER_MINUTE: '0' });
  organization = await createOrganization(ctx.app, 'Keys');
  inbox1 = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'keys-one', organization_id: organization.id });
  inbox2 = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'keys-two', organization_id: organization.id });
});
afterAll(() => ctx.close());

const operator = () => as(ctx.app, OPERATOR_KEY);

describe('POST /v1/api-keys', () => {
  it('answers the record and the secret, once; the list shows a prefix and never the secret', async () => {
    const res = await operator().post('/v1/api-keys', {
      name: 'Agent one',
      organization_id: organization.id,
      inbox_ids: [inbox1.id, inbox1.id],
      permissions: ['send', 'read', 'send'],
    });
    expect(res.status).toBe(201);
    const { key } = res.body;
    expect(key).toMatch(/^inbx_[0-9A-Za-z]{36}$/);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Agent one',
      organization_id: organization.id,
      inbox_ids: [inbox1.id],
      permissions: ['send', 'read'],
      prefix: key.slice(0, 12),
      rate_limit_per_minute: null,
      send_limit_per_hour: null,
      created_at: expect.any(String),
      last_used_at: null,
      key,
    });
    const stored = await ctx.db.apiKey.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(JSON.stringify(stored)).not.toContain(key.slice(12));

    const list = await operator().get(`/v1/api-keys?organization_id=${organization.id}`);
    const listed = list.body.items.find((item: { id: string }) => item.id === res.body.id);
    const { key: _secret, ...record } = res.body;
    expect(listed).toEqual(record);
    expect(JSON.stringify(list.body)).not.toContain(key.slice(12));
  });

  it('records when a key is used', async () => {
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
    const before = Date.now();
    await as(ctx.app, key.key).get('/v1/inboxes').expect(200);
    const [listed] = (await operator().get(`/v1/api-keys?organization_id=${organization.id}&limit=1`)).body.items;
    expect(listed.id).toBe(key.id);
    expect(new Date(listed.last_used_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('puts an operator’s key in `default` when no organization is named', async () => {
    const key = await createKey(ctx.app, OPERATOR_KEY, { permissions: ['read'] });
    expect(key).toMatchObject({ organization_id: 'default', inbox_ids: null });
  });

  it('puts an operator’s key limited to inboxes in their organization when none is named; inboxes of two are 400', async () => {
    const key = await createKey(ctx.app, OPERATOR_KEY, { inbox_ids: [inbox1.id, inbox2.id], permissions: ['read'] });
    expect(key).toMatchObject({ organization_id: organization.id, inbox_ids: [inbox1.id, inbox2.id] });
    await as(ctx.app, key.key).get(`/v1/inboxes/${inbox2.id}`).expect(200);
    const other = await createOrganization(ctx.app, 'Keys elsewhere');
    const elsewhere = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'keys-elsewhere', organization_id: other.id });
    const mixed = await operator().post('/v1/api-keys', {
      name: 'x',
      inbox_ids: [inbox1.id, elsewhere.id],
      permissions: ['read'],
    });
    expect({ status: mixed.status, code: mixed.body.error?.code }).toEqual({ status: 400, code: 'validation_error' });
  });

  it('makes a key with no permission at all, which the routes refuse (403)', async () => {
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: [] });
    expect(key).toMatchObject({ permissions: [] });
    const res = await as(ctx.app, key.key).get('/v1/inboxes');
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 403, code: 'forbidden' });
  });

  it('refuses bad input with 400 and the field', async () => {
    const base = { name: 'x', permissions: ['read'] };
    for (const body of [
      { permissions: ['read'] },
      { name: 'x' },
      { ...base, permissions: ['admin'] },
      { ...base, permissions: 'read' },
      { ...base, permissions: [null] },
      { ...base, inbox_ids: [] },
      { ...base, inbox_ids: inbox1.id },
      { ...base, inbox_ids: Array.from({ length: 101 }, () => inbox1.id) },
      { ...base, inbox_ids: ['a\u0000b'] },
      { ...base, organization_id: 7 },
      { ...base, rate_limit_per_minute: -1 },
      { ...base, rate_limit_per_minute: 1.5 },
      { ...base, rate_limit_per_minute: '10' },
      { ...base, send_limit_per_hour: 1e12 },
      { ...base, name: 'tab\there' },
      { ...base, key: newSecret() },
    ]) {
      const res = await operator().post('/v1/api-keys', body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'validation_error' });
    }
    const notJson = await request(ctx.app)
      .post('/v1/api-keys')
      .set('authorization', `Bearer ${OPERATOR_KEY}`)
      .set('content-type', 'text/plain')
      .send('name=x');
    expect(notJson.status).toBe(415);
  });

  it('answers 404 for organizations and inboxes that do not exist, or are deleted', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const noOrganization = await operator().post('/v1/api-keys', { name: 'x', organization_id: unknown, permissions: ['read'] });
    expect(noOrganization.status).toBe(404);
    for (const id of [unknown, 'not-a-uuid', "' OR 1=1 --"]) {
      const res = await operator().post('/v1/api-keys', {
        name: 'x',
        organization_id: organization.id,
        inbox_ids: [inbox1.id, id],
        permissions: ['read'],
      });
      expect(res.status).toBe(404);
      expect(res.body.error.details).toEqual({ inbox_id: id });
    }
    // An inbox of another organization is not one of this organization's.
    const other = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'keys-default' });
    const elsewhere = await operator().post('/v1/api-keys', {
      name: 'x',
      organization_id: organization.id,
      inbox_ids: [other.id],
      permissions: ['read'],
    });
    expect(elsewhere.status).toBe(404);
  });
});

describe('keys creating keys', () => {
  it('create keys within their scope, permissions and limits; broader is 403, outside their scope 404', async () => {
    const manager = await createKey(ctx.app, OPERATOR_KEY, {
      organization_id: organization.id,
      inbox_ids: [inbox1.id],
      permissions: ['read', 'manage'],
      rate_limit_per_minute: 100,
    });
    const client = as(ctx.app, manager.key);
    const child = await client.post('/v1/api-keys', { name: 'child', inbox_ids: [inbox1.id], permissions: ['read'] });
    expect(child.status).toBe(201);
    expect(child.body).toMatchObject({ organization_id: organization.id, inbox_ids: [inbox1.id], rate_limit_per_minute: 100 });
    await as(ctx.app, child.body.key).get(`/v1/inboxes/${inbox1.id}`).expect(200);

    const refused = async (body: object, status: number) => {
      const res = await client.post('/v1/api-keys', { name: 'broader', ...body });
      expect({ body, status: res.status }).toEqual({ body, status });
    };
    await refused({ inbox_ids: [inbox1.id], permissions: ['read', 'send'] }, 403);
    await refused({ inbox_ids: [inbox1.id], permissions: ['approve'] }, 403);
    await refused({ permissions: ['read'] }, 403);
    await refused({ inbox_ids: [inbox1.id], permissions: ['read'], rate_limit_per_minute: 101 }, 403);
    await refused({ inbox_ids: [inbox1.id], permissions: ['read'], rate_limit_per_minute: 0 }, 403);
    await refused({ inbox_ids: [inbox1.id], permissions: ['read'], rate_limit_per_minute: null }, 403);
    await refused({ inbox_ids: [inbox2.id], permissions: ['read'] }, 404);
    await refused({ inbox_ids: [inbox1.id], permissions: ['read'], organization_id: 'default' }, 404);
    expect(await ctx.db.apiKey.count({ where: { name: 'broader' } })).toBe(0);

    // Without `manage`, no key is created at all.
    const reader = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read', 'send'] });
    const res = await as(ctx.app, reader.key).post('/v1/api-keys', { name: 'x', permissions: ['read'] });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', message: 'This API key lacks the `manage` permission' });
  });

  it('list and revoke only keys that reach nothing beyond their own scope', async () => {
    const wide = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ALL });
    const narrow = await createKey(ctx.app, wide.key, { inbox_ids: [inbox1.id], permissions: ['read', 'manage'] });
    const sibling = await createKey(ctx.app, wide.key, { inbox_ids: [inbox2.id], permissions: ['read'] });
    const outsider = await createKey(ctx.app, OPERATOR_KEY, { permissions: ['read'] });

    const idsSeenBy = async (key: string) =>
      (await as(ctx.app, key).get('/v1/api-keys?limit=200').expect(200)).body.items.map((item: { id: string }) => item.id);
    const wideSees = await idsSeenBy(wide.key);
    expect(wideSees).toEqual(expect.arrayContaining([wide.id, narrow.id, sibling.id]));
    expect(wideSees).not.toContain(outsider.id);
    // Keys limited to inbox1 (this one, and those earlier tests made), and nothing else.
    const narrowList = (await as(ctx.app, narrow.key).get('/v1/api-keys?limit=200')).body;
    expect(narrowList.items.map((item: { id: string }) => item.id)).toContain(narrow.id);
    expect(narrowList.items.filter((item: { inbox_ids: string[] }) => item.inbox_ids?.join() !== inbox1.id)).toEqual([]);
    expect(narrowList.total).toBe(narrowList.items.length);
    expect((await as(ctx.app, narrow.key).get('/v1/api-keys?organization_id=default')).status).toBe(404);

    expect((await as(ctx.app, narrow.key).delete(`/v1/api-keys/${sibling.id}`)).status).toBe(404);
    expect((await as(ctx.app, narrow.key).delete(`/v1/api-keys/${wide.id}`)).status).toBe(404);
    expect((await as(ctx.app, wide.key).delete(`/v1/api-keys/${outsider.id}`)).status).toBe(404);
    await as(ctx.app, outsider.key).get('/v1/inboxes').expect(200);
    await as(ctx.app, wide.key).delete(`/v1/api-keys/${sibling.id}`).expect(204);
    expect((await as(ctx.app, sibling.key).get('/v1/inboxes')).status).toBe(401);
  });
});

describe('DELETE /v1/api-keys/{api_key_id}', () => {
  it('revokes at once: the key is refused, unlisted, and a second revocation is 404', async () => {
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
    await as(ctx.app, key.key).get('/v1/inboxes').expect(200);
    await operator().delete(`/v1/api-keys/${key.id}`).expect(204);
    const refused = await as(ctx.app, key.key).get('/v1/inboxes');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    const list = await operator().get(`/v1/api-keys?organization_id=${organization.id}&limit=200`);
    expect(list.body.items.map((item: { id: string }) => item.id)).not.toContain(key.id);
    expect((await operator().delete(`/v1/api-keys/${key.id}`)).status).toBe(404);
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      expect((await operator().delete(`/v1/api-keys/${id}`)).status).toBe(404);
    }
  });

  it('revokes at once when the path spells the id in capitals', async () => {
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
    await as(ctx.app, key.key).get('/v1/inboxes').expect(200);
    await operator().delete(`/v1/api-keys/${key.id.toUpperCase()}`).expect(204);
    expect((await as(ctx.app, key.key).get('/v1/inboxes')).status).toBe(401);
  });

  it('reads ids in capitals as the same records: a key limited to an inbox reaches it so named', async () => {
    const upper = inbox1.id.toUpperCase();
    const key = await createKey(ctx.app, OPERATOR_KEY, {
      organization_id: organization.id,
      inbox_ids: [upper],
      permissions: ['read'],
    });
    expect(key.inbox_ids).toEqual([inbox1.id]);
    expect((await as(ctx.app, key.key).get(`/v1/inboxes/${upper}`).expect(200)).body.id).toBe(inbox1.id);
    await as(ctx.app, key.key).get(`/v1/messages?inbox_id=${upper}`).expect(200);
  });

  it('lets a key revoke itself', async () => {
    const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['manage'] });
    await as(ctx.app, key.key).delete(`/v1/api-keys/${key.id}`).expect(204);
    expect((await as(ctx.app, key.key).get('/v1/api-keys')).status).toBe(401);
  });

  it('is refused by every replica within the key cache period, and by their sends at once', async () => {
    const replica = await ctx.replica();
    try {
      const key = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read', 'send'] });
      await as(replica.app, key.key).get('/v1/inboxes').expect(200);
      await operator().delete(`/v1/api-keys/${key.id}`).expect(204);
      const revokedAt = Date.now();
      // The other replica may still hold the key in its cache; a send checks the key in its own transaction.
      const send = await as(replica.app, key.key).post('/v1/messages', {
        inbox_id: inbox1.id,
        to: ['someone@example.com'],
        subject: 'After revocation',
        body: 'Must not leave',
      });
      expect(send.status).toBe(401);
      expect(await ctx.db.message.count({ where: { subject: 'After revocation' } })).toBe(0);
      let status = 200;
      while (status !== 401 && Date.now() - revokedAt < 5000) {
        status = (await as(replica.app, key.key).get('/v1/inboxes')).status;
        if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(401);
    } finally {
      await replica.close();
    }
  });
});

describe('authentication with API keys', () => {
  it('answers 401 to wrong, revoked and malformed secrets, counts them per address, and never refuses a right key', async () => {
    const limited = await ctx.replica({ INBOX_AUTH_FAILURES_PER_MINUTE: '6' });
    try {
      const good = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
      const revoked = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
      await operator().delete(`/v1/api-keys/${revoked.id}`).expect(204);
      const lastChanged = `${good.key.slice(0, -1)}${good.key.endsWith('a') ? 'b' : 'a'}`;
      const wrong = [newSecret(), revoked.key, lastChanged, 'inbx_', `${good.key}x`, 'not-a-key', `inbx_${'\u00e9'.repeat(36)}`];
      for (const secret of wrong.slice(0, 6)) {
        const res = await as(limited.app, secret).get('/v1/inboxes');
        expect({ secret, status: res.status, code: res.body.error.code }).toEqual({ secret, status: 401, code: 'unauthorized' });
      }
      expect((await as(limited.app, wrong[6]!).get('/v1/inboxes')).status).toBe(429);
      await as(limited.app, good.key).get('/v1/inboxes').expect(200);
      expect((await request(limited.app).get('/v1/inboxes')).status).toBe(429);
      await as(limited.app, OPERATOR_KEY).get('/v1/inboxes').expect(200);
    } finally {
      await limited.close();
    }
  });

  it('in open mode: checks `inbx_` keys (401 when wrong) and scopes by them; other keys are ignored as before', async () => {
    const open = await ctx.replica({ INBOX_API_KEYS: '' });
    try {
      const key = await createKey(ctx.app, OPERATOR_KEY, {
        organization_id: organization.id,
        inbox_ids: [inbox1.id],
        permissions: ['read'],
      });
      const seen = await as(open.app, key.key).get('/v1/inboxes');
      expect(seen.body.items.map((inbox: { id: string }) => inbox.id)).toEqual([inbox1.id]);
      expect((await as(open.app, newSecret()).get('/v1/inboxes')).status).toBe(401);
      expect((await as(open.app, 'anything-else').get('/v1/inboxes')).body.total).toBeGreaterThan(2);
      expect((await request(open.app).get('/v1/inboxes')).body.total).toBeGreaterThan(2);
    } finally {
      await open.close();
    }
  });
});

describe('per-key limits', () => {
  it('limit requests per key (rate_limit_per_minute), or by the service setting when the key sets none', async () => {
    const limitedApp = await ctx.replica({ INBOX_RATE_LIMIT_PER_MINUTE: '4' });
    try {
      const tight = await createKey(ctx.app, OPERATOR_KEY, {
        organization_id: organization.id,
        permissions: ['read'],
        rate_limit_per_minute: 2,
      });
      const byDefault = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['read'] });
      const free = await createKey(ctx.app, OPERATOR_KEY, {
        organization_id: organization.id,
        permissions: ['read'],
        rate_limit_per_minute: 0,
      });
      const statuses = async (key: string, times: number) => {
        const seen = [];
        for (let i = 0; i < times; i++) seen.push((await as(limitedApp.app, key).get('/v1/inboxes')).status);
        return seen;
      };
      expect(await statuses(tight.key, 3)).toEqual([200, 200, 429]);
      const limited = await as(limitedApp.app, tight.key).get('/v1/inboxes');
      expect(limited.body.error.message).toBe('Too many requests: at most 2 per minute');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(await statuses(byDefault.key, 5)).toEqual([200, 200, 200, 200, 429]);
      expect(await statuses(free.key, 8)).toEqual(Array(8).fill(200));
    } finally {
      await limitedApp.close();
    }
  });

  it('limit sends per key (send_limit_per_hour) besides each inbox’s own limit', async () => {
    const sender = await createKey(ctx.app, OPERATOR_KEY, {
      organization_id: organization.id,
      permissions: ['send'],
      send_limit_per_hour: 1,
    });
    const other = await createKey(ctx.app, OPERATOR_KEY, { organization_id: organization.id, permissions: ['send'] });
    const send = (key: string) =>
      as(ctx.app, key).post('/v1/messages', { inbox_id: inbox2.id, to: [inbox1.email_address], subject: 'Limited', body: 'Hi' });
    await send(sender.key).expect(201);
    const refused = await send(sender.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toBe('Too many sends with this API key: at most 1 per hour');
    await send(other.key).expect(201);
    const sent = await ctx.db.message.findMany({ where: { subject: 'Limited', direction: 'outbound' } });
    expect(sent.map((message) => message.apiKeyId).sort()).toEqual([sender.id, other.id].sort());
  });
});

it('stores an inbox named twice, in lower and upper case, once', async () => {
  const res = await operator()
    .post('/v1/api-keys', {
      name: 'twice',
      organization_id: organization.id,
      inbox_ids: [inbox1.id, inbox1.id.toUpperCase()],
      permissions: ['read'],
    })
    .expect(201);
  expect(res.body.inbox_ids).toEqual([inbox1.id]);
  const stored = await ctx.db.apiKey.findUniqueOrThrow({ where: { id: res.body.id } });
  expect(stored.inboxIds).toEqual([inbox1.id]);
});
