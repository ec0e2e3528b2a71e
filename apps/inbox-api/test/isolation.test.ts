/**
 * Isolation, route by route: organization A's API keys call every /v1 operation with the ids of
 * records they cannot reach (organization B's; for a key limited to inbox A1, A2's as well) and
 * get 404 (403 where the operation is a matter of permission, whatever the id), no list shows
 * such a record or counts it, and the records are unchanged afterwards. The route table must
 * cover every /v1 operation of the OpenAPI document, so a new route cannot be forgotten here.
 */
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { createTestContext, type TestContext } from './context.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from './api-keys/helpers.js';

let ctx: TestContext;

/** Ids of the records around one inbox, and of its organization. */
interface Records {
  organizationId: string;
  inboxId: string;
  threadId: string;
  messageId: string;
  attachmentId: string;
  /** A key limited to this inbox. */
  apiKeyId: string;
  /** The event of the message's send. */
  eventId: string;
  /** A block-list entry of the inbox. */
  listEntryId: string;
  /** A webhook limited to the inbox, and a delivery of the event to it. */
  webhookId: string;
  deliveryId: string;
  /** A draft of the inbox, pending approval (the inbox's send_policy is `approval`). */
  draftId: string;
}

/** A send held for approval: the inbox is put under `approval`, then back to `direct`. */
async function heldDraft(inboxId: string): Promise<string> {
  const operator = as(ctx.app, OPERATOR_KEY);
  await operator.patch(`/v1/inboxes/${inboxId}`, { send_policy: 'approval' }).expect(200);
  const held = await operator
    .post('/v1/messages', { inbox_id: inboxId, to: ['partner@example.com'], subject: 'Held', body: 'Waiting' })
    .expect(202);
  await operator.patch(`/v1/inboxes/${inboxId}`, { send_policy: 'direct' }).expect(200);
  return held.body.draft.id;
}

async function recordsIn(organizationId: string, username: string): Promise<Records> {
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: username, organization_id: organizationId });
  const sent = await as(ctx.app, OPERATOR_KEY)
    .post('/v1/messages', {
      inbox_id: inbox.id,
      to: ['partner@example.com'],
      subject: `Secret of ${username}`,
      body: 'Only for this inbox',
      attachments: [{ filename: 'secret.txt', content_type: 'text/plain', content: Buffer.from('secret').toString('base64') }],
    })
    .expect(201);
  const key = await createKey(ctx.app, OPERATOR_KEY, {
    organization_id: organizationId,
    inbox_ids: [inbox.id],
    permissions: ['read'],
  });
  const eventId = (await ctx.db.event.findFirstOrThrow({ where: { messageId: sent.body.id } })).id;
  const webhook = await as(ctx.app, OPERATOR_KEY)
    .post('/v1/webhooks', {
      url: `https://hooks.example.com/${username}`,
      event_types: ['message.sent'],
      inbox_ids: [inbox.id],
      organization_id: organizationId,
    })
    .expect(201);
  const delivery = await ctx.db.webhookDelivery.create({
    data: { id: randomUUID(), webhookId: webhook.body.id, eventId, status: 'delivered' },
  });
  return {
    organizationId,
    inboxId: inbox.id,
    threadId: sent.body.thread_id,
    messageId: sent.body.id,
    attachmentId: sent.body.attachments[0].id,
    apiKeyId: key.id,
    eventId: String(eventId),
    listEntryId: (
      await as(ctx.app, OPERATOR_KEY)
        .post('/v1/lists', { inbox_id: inbox.id, direction: 'send', type: 'block', entry: `${username}.example.com` })
        .expect(201)
    ).body.id,
    webhookId: webhook.body.id,
    deliveryId: delivery.id,
    draftId: await heldDraft(inbox.id),
  };
}

type Actor = 'organization' | 'inbox' | 'approver';
const ACTORS: Actor[] = ['organization', 'inbox', 'approver'];
let keys: Record<Actor, string>;
/** A1: the inbox the limited key reaches. */
let own: Records;
/** A2: in A, beyond the limited key's reach. */
let a2: Records;
/** What each actor cannot reach: B's records; for the inbox key also A2's (in its own organization, so B's for organization routes). */
let foreign: Record<Actor, Records[]>;

beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY, INBOX_RATE_LIMIT_PER_MINUTE: '0' });
  const a = await createOrganization(ctx.app, 'A');
  const b = await createOrganization(ctx.app, 'B');
  own = await recordsIn(a.id, 'a1');
  a2 = await recordsIn(a.id, 'a2');
  const b1 = await recordsIn(b.id, 'b1');
  keys = {
    organization: (
      await createKey(ctx.app, OPERATOR_KEY, { organization_id: a.id, permissions: ['read', 'send', 'manage', 'approve'] })
    ).key,
    inbox: (
      await createKey(ctx.app, OPERATOR_KEY, {
        organization_id: a.id,
        inbox_ids: [own.inboxId],
        permissions: ['read', 'send', 'manage', 'approve'],
      })
    ).key,
    approver: (await createKey(ctx.app, OPERATOR_KEY, { organization_id: a.id, permissions: ['approve'] })).key,
  };
  foreign = { organization: [b1], inbox: [{ ...a2, organizationId: b.id }, b1], approver: [b1] };
});
afterAll(() => ctx.close());

type Client = ReturnType<typeof as>;
type Call = (client: Client, f: Records) => Promise<Response>;

/** What an operation does when A's keys call it. */
type Case =
  /** Calls that name records out of reach: the status each key gets. */
  | { kind: 'foreign'; calls: Call[]; status: Record<Actor, 403 | 404> }
  /** Lists: what is out of reach never appears, nor is counted; `belongs` says whether an item is within reach. */
  | {
      kind: 'list';
      path: () => string;
      belongs: (item: Record<string, unknown>, actor: Actor) => boolean;
      status: Record<Actor, 200 | 403>;
    }
  /** Calls that name no record: the status each key gets. */
  | { kind: 'own'; call: (client: Client) => Promise<Response>; status: Record<Actor, 201 | 403> };

const unreachable = (...calls: Call[]) => ({
  kind: 'foreign' as const,
  calls,
  status: { organization: 404, inbox: 404, approver: 403 } as const,
});
const listed = { organization: 200, inbox: 200, approver: 403 } as const;
const send =
  (body: object): Call =>
  (c) =>
    c.post('/v1/messages', { to: ['x@example.com'], subject: 's', body: 'b', ...body });
const ownInboxes = (actor: Actor) => (actor === 'inbox' ? [own.inboxId] : [own.inboxId, a2.inboxId]);

const CASES: Record<string, Case> = {
  'POST /v1/organizations': {
    kind: 'own',
    call: (c) => c.post('/v1/organizations', { name: 'Escalated' }),
    status: { organization: 403, inbox: 403, approver: 403 },
  },
  'GET /v1/organizations': {
    kind: 'list',
    path: () => '/v1/organizations',
    belongs: (item) => item.id === own.organizationId,
    status: { organization: 200, inbox: 200, approver: 200 },
  },
  'GET /v1/organizations/{organization_id}': {
    kind: 'foreign',
    calls: [(c, f) => c.get(`/v1/organizations/${f.organizationId}`), (c) => c.get('/v1/organizations/default')],
    status: { organization: 404, inbox: 404, approver: 404 },
  },
  'PATCH /v1/organizations/{organization_id}': unreachable(
    (c, f) => c.patch(`/v1/organizations/${f.organizationId}`, { sending_enabled: false }),
    (c) => c.patch('/v1/organizations/default', { sending_enabled: false }),
  ),
  'DELETE /v1/organizations/{organization_id}': {
    kind: 'foreign',
    calls: [(c, f) => c.delete(`/v1/organizations/${f.organizationId}`)],
    status: { organization: 403, inbox: 403, approver: 403 },
  },

  'POST /v1/api-keys': unreachable(
    (c, f) => c.post('/v1/api-keys', { name: 'Planted', organization_id: f.organizationId, permissions: ['read'] }),
    (c, f) => c.post('/v1/api-keys', { name: 'Planted', inbox_ids: [f.inboxId], permissions: ['read'] }),
    (c, f) => c.post('/v1/api-keys', { name: 'Planted', inbox_ids: [own.inboxId, f.inboxId], permissions: ['read'] }),
  ),
  'GET /v1/api-keys': {
    kind: 'list',
    path: () => '/v1/api-keys',
    belongs: (item, actor) =>
      item.organization_id === own.organizationId &&
      (actor !== 'inbox' || (item.inbox_ids as string[] | null)?.every((id) => id === own.inboxId) === true),
    status: { organization: 200, inbox: 200, approver: 403 },
  },
  'DELETE /v1/api-keys/{api_key_id}': unreachable((c, f) => c.delete(`/v1/api-keys/${f.apiKeyId}`)),

  'POST /v1/inboxes': {
    kind: 'foreign',
    calls: [(c, f) => c.post('/v1/inboxes', { name: 'Planted', email_username: 'planted', organization_id: f.organizationId })],
    // A key limited to some inboxes creates none, whatever the organization.
    status: { organization: 404, inbox: 403, approver: 403 },
  },
  'GET /v1/inboxes': {
    kind: 'list',
    path: () => '/v1/inboxes',
    belongs: (item, actor) => ownInboxes(actor).includes(item.id as string),
    status: listed,
  },
  'GET /v1/inboxes/{inbox_id}': unreachable((c, f) => c.get(`/v1/inboxes/${f.inboxId}`)),
  'PATCH /v1/inboxes/{inbox_id}': unreachable((c, f) => c.patch(`/v1/inboxes/${f.inboxId}`, { sending_enabled: false })),
  'DELETE /v1/inboxes/{inbox_id}': unreachable((c, f) => c.delete(`/v1/inboxes/${f.inboxId}`)),

  'POST /v1/lists': unreachable(
    (c, f) => c.post('/v1/lists', { inbox_id: f.inboxId, direction: 'send', type: 'block', entry: 'planted.example.com' }),
    (c, f) =>
      c.post('/v1/lists', { organization_id: f.organizationId, direction: 'send', type: 'allow', entry: 'planted.example.com' }),
  ),
  'GET /v1/lists': {
    kind: 'list',
    path: () => '/v1/lists',
    belongs: (item, actor) =>
      item.organization_id === own.organizationId &&
      (actor !== 'inbox' || item.inbox_id === null || item.inbox_id === own.inboxId),
    status: listed,
  },
  'DELETE /v1/lists/{entry_id}': unreachable(
    (c, f) => c.delete(`/v1/lists/${f.listEntryId}`),
    (c, f) => c.get(`/v1/lists?inbox_id=${f.inboxId}`),
    (c, f) => c.get(`/v1/lists?organization_id=${f.organizationId}`),
  ),

  'GET /v1/threads': unreachable((c, f) => c.get(`/v1/threads?inbox_id=${f.inboxId}`)),
  'GET /v1/threads/{thread_id}': unreachable((c, f) => c.get(`/v1/threads/${f.threadId}`)),

  'POST /v1/messages': {
    kind: 'foreign',
    calls: [
      (c, f) => send({ inbox_id: f.inboxId })(c, f),
      (c, f) => send({ inbox_id: own.inboxId, reply_to_thread_id: f.threadId })(c, f),
    ],
    status: { organization: 404, inbox: 404, approver: 403 },
  },
  'GET /v1/messages': unreachable(
    (c, f) => c.get(`/v1/messages?inbox_id=${f.inboxId}`),
    (c, f) => c.get(`/v1/messages?thread_id=${f.threadId}`),
    (c, f) => c.get(`/v1/messages?inbox_id=${own.inboxId}&thread_id=${f.threadId}`),
    (c, f) => c.get(`/v1/messages?inbox_id=${f.inboxId}&q=secret`),
    (c, f) => c.get(`/v1/messages?thread_id=${f.threadId}&q=secret`),
  ),
  'GET /v1/messages/{message_id}': unreachable((c, f) => c.get(`/v1/messages/${f.messageId}`)),
  'PATCH /v1/messages/{message_id}': unreachable(
    (c, f) => c.patch(`/v1/messages/${f.messageId}`, { add_labels: ['planted'] }),
    (c, f) => c.patch(`/v1/messages/${f.messageId}`, { remove_labels: ['sent'] }),
  ),
  'POST /v1/messages/{message_id}/reply': unreachable(
    (c, f) => c.post(`/v1/messages/${f.messageId}/reply`, { body: 'Planted' }),
    (c, f) => c.post(`/v1/messages/${f.messageId}/reply`, { body: 'Planted', reply_all: true }),
  ),
  'POST /v1/messages/{message_id}/forward': unreachable((c, f) =>
    c.post(`/v1/messages/${f.messageId}/forward`, { to: ['x@example.com'], body: 'Planted' }),
  ),

  'GET /v1/search': unreachable(
    (c, f) => c.get(`/v1/search?q=secret&inbox_ids=${f.inboxId}`),
    (c, f) => c.get(`/v1/search?q=secret&inbox_ids=${own.inboxId},${f.inboxId}`),
  ),

  'GET /v1/attachments': unreachable(
    (c, f) => c.get(`/v1/attachments?inbox_id=${f.inboxId}`),
    (c, f) => c.get(`/v1/attachments?thread_id=${f.threadId}`),
    (c, f) => c.get(`/v1/attachments?message_id=${f.messageId}`),
    (c, f) => c.get(`/v1/attachments?inbox_id=${own.inboxId}&message_id=${f.messageId}`),
  ),
  'GET /v1/attachments/{attachment_id}': unreachable((c, f) => c.get(`/v1/attachments/${f.attachmentId}`)),
  'GET /v1/attachments/{attachment_id}/content': unreachable(
    (c, f) => c.get(`/v1/attachments/${f.attachmentId}/content`),
    (c, f) => c.get(`/v1/attachments/${f.attachmentId}/content?format=base64`),
  ),

  'POST /v1/drafts': unreachable(
    (c, f) => c.post('/v1/drafts', { inbox_id: f.inboxId, to: ['x@example.com'], subject: 's', body: 'b' }),
    (c, f) =>
      c.post('/v1/drafts', {
        inbox_id: own.inboxId,
        to: ['x@example.com'],
        subject: 's',
        body: 'b',
        reply_to_thread_id: f.threadId,
      }),
  ),
  // A reviewer (`approve` alone) reads the drafts it approves.
  'GET /v1/drafts': {
    kind: 'list',
    path: () => '/v1/drafts',
    belongs: (item, actor) => ownInboxes(actor).includes(item.inbox_id as string),
    status: { organization: 200, inbox: 200, approver: 200 },
  },
  'GET /v1/drafts/{draft_id}': {
    kind: 'foreign',
    calls: [(c, f) => c.get(`/v1/drafts/${f.draftId}`), (c, f) => c.get(`/v1/drafts?inbox_id=${f.inboxId}`)],
    status: { organization: 404, inbox: 404, approver: 404 },
  },
  'PATCH /v1/drafts/{draft_id}': unreachable((c, f) => c.patch(`/v1/drafts/${f.draftId}`, { subject: 'Changed' })),
  'DELETE /v1/drafts/{draft_id}': unreachable((c, f) => c.delete(`/v1/drafts/${f.draftId}`)),
  'POST /v1/drafts/{draft_id}/send': unreachable((c, f) => c.post(`/v1/drafts/${f.draftId}/send`)),
  // The approver key has `approve`: out of reach is 404 for every key.
  'POST /v1/drafts/{draft_id}/approve': {
    kind: 'foreign',
    calls: [(c, f) => c.post(`/v1/drafts/${f.draftId}/approve`)],
    status: { organization: 404, inbox: 404, approver: 404 },
  },
  'POST /v1/drafts/{draft_id}/reject': {
    kind: 'foreign',
    calls: [(c, f) => c.post(`/v1/drafts/${f.draftId}/reject`, { reason: 'No' })],
    status: { organization: 404, inbox: 404, approver: 404 },
  },

  'GET /v1/events': unreachable(
    (c, f) => c.get(`/v1/events?after=${f.eventId}`),
    (c, f) => c.get(`/v1/events?inbox_id=${f.inboxId}`),
    (c, f) => c.get(`/v1/events?thread_id=${f.threadId}`),
    (c, f) => c.get(`/v1/events?after=${f.eventId}&wait=5`),
  ),
  // Refused before the stream opens, so the answer is a whole one.
  'GET /v1/events/stream': unreachable(
    (c, f) => c.get(`/v1/events/stream?after=${f.eventId}`),
    (c, f) => c.get(`/v1/events/stream?inbox_id=${f.inboxId}`),
    (c, f) => c.get(`/v1/events/stream?thread_id=${f.threadId}`),
  ),

  'POST /v1/webhooks': unreachable(
    (c, f) =>
      c.post('/v1/webhooks', {
        url: 'https://hooks.example.com/planted',
        event_types: ['message.received'],
        organization_id: f.organizationId,
        inbox_ids: [own.inboxId],
      }),
    (c, f) =>
      c.post('/v1/webhooks', {
        url: 'https://hooks.example.com/planted',
        event_types: ['message.received'],
        inbox_ids: [f.inboxId],
      }),
  ),
  'GET /v1/webhooks': {
    kind: 'list',
    path: () => '/v1/webhooks',
    belongs: (item, actor) =>
      item.organization_id === own.organizationId &&
      (actor !== 'inbox' || (item.inbox_ids as string[] | null)?.every((id) => id === own.inboxId) === true),
    status: listed,
  },
  'GET /v1/webhooks/{webhook_id}': unreachable((c, f) => c.get(`/v1/webhooks/${f.webhookId}`)),
  'PATCH /v1/webhooks/{webhook_id}': unreachable(
    (c, f) => c.patch(`/v1/webhooks/${f.webhookId}`, { enabled: false }),
    (c, f) => c.patch(`/v1/webhooks/${own.webhookId}`, { inbox_ids: [f.inboxId] }),
  ),
  'DELETE /v1/webhooks/{webhook_id}': unreachable((c, f) => c.delete(`/v1/webhooks/${f.webhookId}`)),
  'GET /v1/webhooks/{webhook_id}/deliveries': unreachable((c, f) => c.get(`/v1/webhooks/${f.webhookId}/deliveries`)),
  'POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry': unreachable(
    (c, f) => c.post(`/v1/webhooks/${f.webhookId}/deliveries/${f.deliveryId}/retry`),
    (c, f) => c.post(`/v1/webhooks/${own.webhookId}/deliveries/${f.deliveryId}/retry`),
  ),
};

it('lists only the events of what each key reaches', async () => {
  for (const actor of ['organization', 'inbox'] as const) {
    const items = (await as(ctx.app, keys[actor]).get('/v1/events?limit=500').expect(200)).body.items as { inbox_id: string }[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.filter((item) => !ownInboxes(actor).includes(item.inbox_id))).toEqual([]);
  }
  expect((await as(ctx.app, keys.approver).get('/v1/events')).status).toBe(403);
});

it('searches only what each key reaches, and counts nothing else', async () => {
  for (const actor of ['organization', 'inbox'] as const) {
    const body = (await as(ctx.app, keys[actor]).get('/v1/search?q=secret&limit=200').expect(200)).body as {
      items: { inbox_id: string }[];
      total: number;
    };
    expect(body.items.map((item) => item.inbox_id).sort()).toEqual([...ownInboxes(actor)].sort());
    expect(body.total).toBe(ownInboxes(actor).length);
  }
  expect((await as(ctx.app, keys.approver).get('/v1/search?q=secret')).status).toBe(403);
});

it('covers every /v1 operation of the OpenAPI document', async () => {
  const { paths } = (await as(ctx.app, OPERATOR_KEY).get('/openapi.json')).body as { paths: Record<string, object> };
  const operations = Object.entries(paths)
    .filter(([path]) => path.startsWith('/v1/'))
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  expect(operations.sort()).toEqual(Object.keys(CASES).sort());
});

describe.each(ACTORS)("organization A's %s key", (actor) => {
  const client = () => as(ctx.app, keys[actor]);

  it.each(Object.entries(CASES).filter(([, c]) => c.kind === 'foreign'))('gets 403 or 404 from %s', async (_name, c) => {
    if (c.kind !== 'foreign') return;
    for (const records of foreign[actor]) {
      for (const call of c.calls) {
        const res = await call(client(), records);
        expect({ status: res.status, code: res.body.error?.code }).toEqual({
          status: c.status[actor],
          code: c.status[actor] === 404 ? 'not_found' : 'forbidden',
        });
      }
    }
  });

  it.each(Object.entries(CASES).filter(([, c]) => c.kind === 'list'))(
    'never sees nor counts what it cannot reach in %s',
    async (_name, c) => {
      if (c.kind !== 'list') return;
      const res = await client().get(`${c.path()}?limit=200`);
      expect(res.status).toBe(c.status[actor]);
      if (res.status !== 200) return;
      const items = res.body.items as Record<string, unknown>[];
      expect(items.length).toBeGreaterThan(0);
      expect(items.filter((item) => !c.belongs(item, actor))).toEqual([]);
      expect(res.body.total).toBe(items.length);
    },
  );

  it.each(Object.entries(CASES).filter(([, c]) => c.kind === 'own'))(
    'is refused or acts in its own organization through %s',
    async (_name, c) => {
      if (c.kind !== 'own') return;
      expect((await c.call(client())).status).toBe(c.status[actor]);
    },
  );

  it('cannot open another scope’s attachment with a forged download link', async () => {
    for (const records of foreign[actor]) {
      const res = await client().get(`/v1/attachments/${records.attachmentId}/content?token=forged&expires=4102444800`);
      expect(res.status).toBe(403);
    }
  });
});

it('leaves the records out of reach exactly as they were', async () => {
  const operator = as(ctx.app, OPERATOR_KEY);
  for (const records of foreign.inbox) {
    await operator.get(`/v1/inboxes/${records.inboxId}`).expect(200);
    expect((await operator.get(`/v1/messages?inbox_id=${records.inboxId}`)).body.total).toBe(1);
    expect((await operator.get(`/v1/attachments?inbox_id=${records.inboxId}`)).body.total).toBe(1);
    expect((await operator.get(`/v1/threads/${records.threadId}`)).body.messages).toHaveLength(1);
    expect((await operator.get('/v1/api-keys?limit=200')).body.items.map((item: { id: string }) => item.id)).toContain(
      records.apiKeyId,
    );
    expect((await operator.get(`/v1/webhooks/${records.webhookId}`).expect(200)).body).toMatchObject({
      enabled: true,
      inbox_ids: [records.inboxId],
    });
    expect(await ctx.db.webhookDelivery.findUniqueOrThrow({ where: { id: records.deliveryId } })).toMatchObject({
      status: 'delivered',
      manual: false,
    });
  }
  expect(await ctx.db.webhook.count({ where: { url: 'https://hooks.example.com/planted' } })).toBe(0);
  await operator.get(`/v1/organizations/${foreign.organization[0]!.organizationId}`).expect(200);
  expect(await ctx.db.apiKey.count({ where: { name: 'Planted' } })).toBe(0);
  expect(await ctx.db.inbox.count({ where: { emailAddress: { startsWith: 'planted@' } } })).toBe(0);
  expect(await ctx.db.organization.count({ where: { name: 'Escalated' } })).toBe(0);
  expect(await ctx.db.message.count({ where: { subject: 's' } })).toBe(0);
  for (const records of foreign.inbox) {
    expect(await ctx.db.listEntry.count({ where: { id: records.listEntryId } })).toBe(1);
    expect((await operator.get(`/v1/inboxes/${records.inboxId}`)).body.sending_enabled).toBe(true);
  }
  expect(await ctx.db.listEntry.count({ where: { entry: 'planted.example.com' } })).toBe(0);
  for (const records of foreign.inbox) {
    expect((await operator.get(`/v1/drafts/${records.draftId}`)).body).toMatchObject({
      status: 'pending_approval',
      subject: 'Held',
    });
  }
  expect(await ctx.db.draft.count({ where: { status: { not: 'pending_approval' } } })).toBe(0);
  expect(await ctx.db.organization.count({ where: { sendingEnabled: false } })).toBe(0);
  expect(await ctx.db.message.count({ where: { labels: { has: 'planted' } } })).toBe(0);
  expect(await ctx.db.message.count({ where: { text: { contains: 'Planted' } } })).toBe(0);
});
