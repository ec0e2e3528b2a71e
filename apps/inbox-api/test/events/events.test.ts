import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import pg from 'pg';
import { pgTransaction } from '@repo/db';
import { pgStatements } from '../../src/database.js';
import { appendEvents, type NewEvent, removeExpiredEvents } from '../../src/events/log.js';
import { checkCursor, matchesFilters, readEvents } from '../../src/events/service.js';
import { as, createInbox, createKey, createOrganization, OPERATOR_KEY } from '../api-keys/helpers.js';
import { createTestContext, type TestContext } from '../context.js';

jest.setTimeout(60_000);

let ctx: TestContext;
let server: http.Server;
let baseUrl: string;
let orgA: { id: string };
let orgB: { id: string };
let inboxA: { id: string; email_address: string };
let inboxA2: { id: string; email_address: string };
let inboxB: { id: string; email_address: string };
let keyA: string;
let keyA1: string;
let keyB: string;

beforeAll(async () => {
  ctx = await createTestContext({
    INBOX_API_KEYS: OPERATOR_KEY,
    INBOX_RATE_LIMIT_PER_MINUTE: '0',
    INBOX_SEND_LIMIT_PER_HOUR: '0',
  });
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  orgA = await createOrganization(ctx.app, 'Events A');
  orgB = await createOrganization(ctx.app, 'Events B');
  inboxA = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'ev-a', organization_id: orgA.id });
  inboxA2 = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'ev-a2', organization_id: orgA.id });
  inboxB = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'ev-b', organization_id: orgB.id });
  keyA = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, permissions: ['read', 'send'] })).key;
  keyA1 = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, inbox_ids: [inboxA.id], permissions: ['read'] }))
    .key;
  keyB = (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgB.id, permissions: ['read', 'send'] })).key;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await ctx.close();
});

/** Sends from `from` to `to` with the local transport: `message.sent` in one inbox, `message.received` in the other. */
async function mail(key: string, from: { id: string }, to: { email_address: string }, subject: string) {
  return (
    await as(ctx.app, key)
      .post('/v1/messages', { inbox_id: from.id, to: [to.email_address], subject, body: 'Hello' })
      .expect(201)
  ).body as { id: string; thread_id: string };
}

/** The newest event a key of `scope` can see: a cursor it may pass (another scope's is not found). */
const lastId = async (scope: { organizationId?: string; inboxId?: string } = {}) =>
  Number(
    (
      await ctx.db.event.findFirst({
        where: { organizationId: scope.organizationId, inboxId: scope.inboxId },
        orderBy: { id: 'desc' },
        select: { id: true },
      })
    )?.id ?? 0,
  );
const inA = () => ({ organizationId: orgA.id });
const inB = () => ({ organizationId: orgB.id });
const inA1 = () => ({ inboxId: inboxA.id });

describe('the event log', () => {
  it('records message.sent and message.received with the message list view, in scope', async () => {
    const after = await lastId(inA());
    const sent = await mail(keyA, inboxA2, inboxA, 'First event');
    const page = (await as(ctx.app, keyA).get(`/v1/events?after=${after}`).expect(200)).body;
    expect(page.items.map((event: { type: string; inbox_id: string }) => [event.type, event.inbox_id])).toEqual(
      expect.arrayContaining([
        ['message.received', inboxA.id],
        ['message.sent', inboxA2.id],
      ]),
    );
    const sentEvent = page.items.find((event: { type: string }) => event.type === 'message.sent');
    expect(sentEvent).toMatchObject({
      organization_id: orgA.id,
      message_id: sent.id,
      thread_id: sent.thread_id,
      data: { id: sent.id, subject: 'First event', inbox_id: inboxA2.id },
    });
    // The received message's data is its list view, bodies included (taken from the row written, records.ts).
    const receivedEvent = page.items.find((event: { type: string }) => event.type === 'message.received');
    const listed = (await as(ctx.app, keyA).get(`/v1/messages?inbox_id=${inboxA.id}`).expect(200)).body.items;
    const listView = listed.find((message: { id: string }) => message.id === receivedEvent.message_id);
    expect(listView).toMatchObject({ text: expect.any(String), content_clean: expect.any(String) });
    expect(receivedEvent.data).toEqual(listView);
    expect(page.next_after).toBe(page.items.at(-1).id);
    // Ids increase; nothing after the last one.
    const ids = page.items.map((event: { id: number }) => event.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect((await as(ctx.app, keyA).get(`/v1/events?after=${page.next_after}`).expect(200)).body).toEqual({
      items: [],
      next_after: page.next_after,
    });
  });

  it('filters by type, inbox and thread, and a key limited to one inbox sees only its events', async () => {
    const cursors = { [keyA]: await lastId(inA()), [keyA1]: await lastId(inA1()), [keyB]: await lastId(inB()) };
    const sent = await mail(keyA, inboxA, inboxA2, 'Filters');
    await mail(keyA, inboxA2, inboxA2, 'Other thread');
    const get = async (key: string, query: string) =>
      (await as(ctx.app, key).get(`/v1/events?after=${cursors[key]}&${query}`).expect(200)).body.items as {
        type: string;
        inbox_id: string;
        thread_id: string;
      }[];
    expect((await get(keyA, 'types=message.sent')).every((event) => event.type === 'message.sent')).toBe(true);
    // The parameter repeated is the list too, as the comma-separated form.
    const both = await get(keyA, 'types=message.sent&types=message.received');
    expect(both.length).toBeGreaterThan(0);
    expect(both.every((event) => ['message.sent', 'message.received'].includes(event.type))).toBe(true);
    expect(both).toEqual(await get(keyA, 'types=message.sent,message.received'));
    expect(await get(keyA, `thread_id=${sent.thread_id}`)).toEqual([
      expect.objectContaining({ type: 'message.sent', inbox_id: inboxA.id }),
    ]);
    expect((await get(keyA, `inbox_id=${inboxA2.id}`)).map((event) => event.inbox_id)).toEqual([
      inboxA2.id,
      inboxA2.id,
      inboxA2.id,
    ]);
    expect((await get(keyA1, '')).map((event) => event.inbox_id)).toEqual([inboxA.id]);
    expect(await get(keyB, '')).toEqual([]);
  });

  it('answers 404 for a cursor, inbox or thread of another scope, never its events', async () => {
    const after = await lastId(inB());
    const sent = await mail(keyA, inboxA2, inboxA2, 'Secret');
    const secretEvent = Number((await ctx.db.event.findFirst({ where: { messageId: sent.id }, orderBy: { id: 'asc' } }))!.id);
    for (const path of [
      `/v1/events?after=${secretEvent}`,
      `/v1/events?inbox_id=${inboxA2.id}`,
      `/v1/events?thread_id=${sent.thread_id}`,
      `/v1/events/stream?after=${secretEvent}`,
    ]) {
      const res = await as(ctx.app, keyB).get(path);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 404, code: 'not_found' });
    }
    // The key limited to inbox A: the other inbox of its own organization is out of reach as well.
    expect((await as(ctx.app, keyA1).get(`/v1/events?after=${secretEvent}`)).status).toBe(404);
    expect((await as(ctx.app, keyB).get(`/v1/events?after=${after}`).expect(200)).body.items).toEqual([]);
  });

  it('resumes after its own cursor once the inbox of that event is deleted; an id past the newest is 404', async () => {
    const doomed = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'ev-doomed', organization_id: orgB.id });
    const cursor = Number(await appendAlone(eventIn(doomed.id, orgB.id)));
    await as(ctx.app, OPERATOR_KEY).delete(`/v1/inboxes/${doomed.id}`).expect(204);
    expect(await ctx.db.event.count({ where: { id: BigInt(cursor) } })).toBe(0);
    const next = Number(await appendAlone(eventIn(inboxB.id, orgB.id)));
    const page = (await as(ctx.app, keyB).get(`/v1/events?after=${cursor}`).expect(200)).body;
    expect(page.items.map((event: { id: number }) => event.id)).toEqual([next]);
    expect((await as(ctx.app, keyB).get(`/v1/events?after=${next + 1000}`)).status).toBe(404);
  });

  it('refuses bad input with 400', async () => {
    for (const query of [
      'wait=61',
      'wait=0x10',
      'wait=',
      'limit=%20',
      'limit=1e2',
      'wait=-1',
      'wait=x',
      'after=abc',
      'after=-5',
      'after=1e3',
      'types=message.exploded',
      'types=message.sent&types=message.exploded',
      'limit=0',
      'limit=501',
      'after=%00',
      "inbox_id=' OR 1=1 --",
      'bogus=1',
    ]) {
      const res = await as(ctx.app, keyA).get(`/v1/events?${query}`);
      if (query.startsWith('inbox_id')) expect(res.status).toBe(404);
      else
        expect({ query, status: res.status, code: res.body.error?.code }).toEqual({
          query,
          status: 400,
          code: 'validation_error',
        });
    }
    expect((await as(ctx.app, keyA).get('/v1/events/stream').set('last-event-id', 'x')).status).toBe(400);
  });
});

function eventIn(inboxId: string, organizationId: string, type: NewEvent['type'] = 'message.received'): NewEvent {
  return { type, organizationId, inboxId, threadId: null, messageId: null, data: { note: 'test' } };
}

async function appendAlone(event: NewEvent): Promise<string> {
  const [id] = await appendEvents(pgStatements(ctx.db.pool), [event]);
  return id!;
}

describe('ids in commit order', () => {
  it('a reader following the log never skips an event committed after a larger one was seen', async () => {
    const organizationId = `order-${Date.now()}`;
    const filters = { scope: { organizationId } };
    const start = BigInt(await lastId({ organizationId }));
    const writers = Array.from({ length: 30 }, (_, n) =>
      pgTransaction(ctx.db, async (client) => {
        // Each holds its transaction open for a while after appending: commits come in another order than appends began.
        const [id] = await appendEvents(pgStatements(client), [eventIn(inboxA.id, organizationId)]);
        await new Promise((resolve) => setTimeout(resolve, (n * 7) % 40));
        return id;
      }),
    );
    const seen: string[] = [];
    let cursor = start;
    let done = false;
    const all = Promise.all(writers).finally(() => (done = true));
    // Reads as fast as it can while the writers commit, as a client would with its cursor.
    while (!done) {
      const items = await readEvents(ctx.db, filters, cursor, 100);
      for (const item of items) seen.push(String(item.id));
      if (items.length > 0) cursor = BigInt(items.at(-1)!.id);
    }
    const ids = await all;
    for (const item of await readEvents(ctx.db, filters, cursor, 100)) seen.push(String(item.id));
    expect(seen).toEqual([...ids].sort((a, b) => Number(a) - Number(b)));
  });

  it('records each of 30 mails racing into one thread with its event (record and event in one statement)', async () => {
    const after = BigInt(await lastId(inA1()));
    await Promise.all(Array.from({ length: 30 }, () => mail(keyA, inboxA2, inboxA, 'Racing into one thread')));
    const received = await ctx.db.message.findMany({ where: { inboxId: inboxA.id, subject: 'Racing into one thread' } });
    const events = await ctx.db.event.findMany({ where: { inboxId: inboxA.id, type: 'message.received', id: { gt: after } } });
    expect(received).toHaveLength(30);
    expect(events.map((event) => event.messageId).sort()).toEqual(received.map((message) => message.id).sort());
  });

  it('keeps no event of a transaction that rolled back, and one of each that committed', async () => {
    const organizationId = `rollback-${Date.now()}`;
    await expect(
      pgTransaction(ctx.db, async (client) => {
        await appendEvents(pgStatements(client), [eventIn(inboxA.id, organizationId)]);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await ctx.db.event.count({ where: { organizationId } })).toBe(0);
    // A receive into an inbox being deleted records nothing: no message, no event.
    const before = await ctx.db.event.count();
    await ctx.db.inbox.update({ where: { id: inboxB.id }, data: { deletedAt: new Date() } });
    const res = await as(ctx.app, keyA).post('/v1/messages', {
      inbox_id: inboxA.id,
      to: [inboxB.email_address],
      subject: 'Gone',
      body: 'x',
    });
    await ctx.db.inbox.update({ where: { id: inboxB.id }, data: { deletedAt: null } });
    expect(res.status).toBe(201);
    const types = (await ctx.db.event.findMany({ orderBy: { id: 'asc' }, skip: before })).map(
      (event) => `${event.type} ${event.inboxId}`,
    );
    expect(types).toEqual([`message.sent ${inboxA.id}`]);
  });
});

describe('matchesFilters', () => {
  const signal = { id: '1', type: 'message.received' as const, organization_id: 'o', inbox_id: 'i', thread_id: 't' };
  it('applies the scope and each filter', () => {
    expect(matchesFilters({ scope: {} }, signal)).toBe(true);
    expect(matchesFilters({ scope: { organizationId: 'p' } }, signal)).toBe(false);
    expect(matchesFilters({ scope: { organizationId: 'o', inboxIds: ['j'] } }, signal)).toBe(false);
    expect(matchesFilters({ scope: { organizationId: 'o', inboxIds: ['i'] } }, signal)).toBe(true);
    expect(matchesFilters({ scope: {}, types: ['message.sent'] }, signal)).toBe(false);
    expect(matchesFilters({ scope: {}, inboxId: 'j' }, signal)).toBe(false);
    expect(matchesFilters({ scope: {}, threadId: 't' }, signal)).toBe(true);
    expect(matchesFilters({ scope: {}, threadId: 'u' }, signal)).toBe(false);
  });
});

describe('GET /v1/events?wait=', () => {
  it('answers as soon as a matching event commits, woken by NOTIFY', async () => {
    const after = await lastId(inA1());
    const started = Date.now();
    const waiting = fetch(`${baseUrl}/v1/events?after=${after}&wait=20&types=message.received`, {
      headers: { authorization: `Bearer ${keyA1}` },
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { items: { type: string; inbox_id: string }[] } }));
    await until(() => ctx.deps.events.size === 1);
    // Events it does not want (another scope, another type) do not answer it.
    await mail(keyB, inboxB, inboxB, 'Not for A');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ctx.deps.events.size).toBe(1);
    await mail(keyA, inboxA2, inboxA, 'Wake up');
    const { status, body } = await waiting;
    expect(status).toBe(200);
    expect(body.items).toEqual([expect.objectContaining({ type: 'message.received', inbox_id: inboxA.id })]);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(ctx.deps.events.size).toBe(0);
  });

  it('answers empty when the wait is over', async () => {
    const after = await lastId(inB());
    const res = await as(ctx.app, keyB).get(`/v1/events?after=${after}&wait=1&inbox_id=${inboxB.id}`).expect(200);
    expect(res.body).toEqual({ items: [], next_after: after });
  });

  it('costs no query while 100 waiters are idle', async () => {
    const after = await lastId(inB());
    const controller = new AbortController();
    const waiters = Array.from({ length: 100 }, () =>
      fetch(`${baseUrl}/v1/events?after=${after}&wait=30&inbox_id=${inboxB.id}`, {
        headers: { authorization: `Bearer ${keyB}` },
        signal: controller.signal,
      }).catch(() => undefined),
    );
    try {
      // Every one past its first read, waiting: on a loaded machine the last of them still read when all had subscribed.
      await until(() => ctx.deps.events.waiting === 100);
      const recorded = recordQueries();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      // A waiter polling even once a second would make 300; what is left is the service's own periodic work.
      const queries = recorded();
      expect(queries.filter(readsEvents)).toEqual([]);
      expect(queries.length).toBeLessThan(20);
    } finally {
      controller.abort();
      await Promise.all(waiters);
    }
    await until(() => ctx.deps.events.size === 0);
  });
});

/**
 * The texts of the queries this process sends to Postgres from now until the returned function is
 * called: every pg.Client's, so the app's pool and Prisma's adapter alike. Exact, where
 * pg_stat_database's counts are not: a backend flushes them up to seconds late, so queries made
 * just before a window could be counted in it.
 */
function recordQueries(): () => string[] {
  const prototype = pg.Client.prototype;
  const query = Object.getOwnPropertyDescriptor(prototype, 'query')!.value as (this: pg.Client, ...args: unknown[]) => unknown;
  const texts: string[] = [];
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first] = args as [string | { text?: string }];
    texts.push(typeof first === 'string' ? first : (first?.text ?? ''));
    return query.apply(this, args);
  } as typeof prototype.query;
  return () => {
    prototype.query = query as typeof prototype.query;
    return texts;
  };
}

/** Whether a query reads the event log (readEvents, the live feed): `SELECT ... FROM "public"."events"`. */
const readsEvents = (text: string) => /^SELECT\b[\s\S]*\bFROM "public"\."events"/.test(text);

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An SSE client (of this test's server, or of `options.baseUrl`): the lines it received so far, and a way to cut the connection. */
function openStream(path: string, key: string, headers: Record<string, string> = {}, options: { baseUrl?: string } = {}) {
  const received: string[] = [];
  let status = 0;
  let ended = false;
  const req = http.get(`${options.baseUrl ?? baseUrl}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
  req.on('response', (res) => {
    status = res.statusCode ?? 0;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => received.push(chunk));
    res.on('end', () => (ended = true));
    res.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  return {
    get status() {
      return status;
    },
    get ended() {
      return ended;
    },
    ids: () => [...received.join('').matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1])),
    text: () => received.join(''),
    close: () => req.destroy(),
  };
}

describe('GET /v1/events/stream', () => {
  it("answers HEAD with the stream's headers at once, and its refusals as GET does", async () => {
    const head = (path: string, key: string) =>
      fetch(`${baseUrl}${path}`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(5000),
      });
    const res = await head('/v1/events/stream', keyA);
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({
      status: 200,
      type: 'text/event-stream; charset=utf-8',
    });
    expect((await head('/v1/events/stream?after=999999999999', keyA)).status).toBe(404);
    expect((await head('/v1/events/stream', 'inbx_wrong')).status).toBe(401);
  });

  it('sends events as they commit, with their ids, and Last-Event-ID resumes without a gap', async () => {
    const after = await lastId(inA());
    const stream = openStream(`/v1/events/stream?after=${after}&inbox_id=${inboxA.id}`, keyA);
    await until(() => stream.status === 200);
    await mail(keyA, inboxA2, inboxA, 'Streamed one');
    await until(() => stream.ids().length === 1);
    expect(stream.text()).toMatch(/^event: message\.received$/m);
    stream.close();
    const seen = stream.ids()[0]!;
    // Two more while no one listens; the reconnection gets them, and only them.
    await mail(keyA, inboxA2, inboxA, 'Missed two');
    await mail(keyA, inboxA2, inboxA, 'Missed three');
    const resumed = openStream(`/v1/events/stream?inbox_id=${inboxA.id}`, keyA, { 'last-event-id': String(seen) });
    await until(() => resumed.ids().length === 2);
    const expected = (
      await ctx.db.event.findMany({ where: { inboxId: inboxA.id, id: { gt: seen } }, orderBy: { id: 'asc' } })
    ).map((event) => Number(event.id));
    expect(resumed.ids()).toEqual(expected);
    resumed.close();
    await until(() => ctx.deps.events.size === 0);
  });

  it('sends a comment every 15 s on a quiet stream', async () => {
    const stream = openStream(`/v1/events/stream?after=${await lastId(inB())}&types=thread.summarized`, keyB);
    try {
      await until(() => stream.status === 200);
      await until(() => stream.text().includes(': keep-alive\n\n'), 20_000);
      expect(stream.ids()).toEqual([]);
    } finally {
      stream.close();
    }
    await until(() => ctx.deps.events.size === 0);
  });

  it('wakes its waiters after the LISTEN connection is cut, listening again', async () => {
    const after = await lastId(inA1());
    const stream = openStream(`/v1/events/stream?after=${after}`, keyA1);
    try {
      await until(() => stream.status === 200);
      const cut = await ctx.db.$queryRaw<{ cut: boolean }[]>`
        SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
         WHERE datname = current_database() AND query ILIKE 'LISTEN%'`;
      expect(cut).toEqual([{ cut: true }]);
      // Listening again takes a second; a message meanwhile is found by the reread that follows.
      await mail(keyA, inboxA2, inboxA, 'Through the cut');
      await until(() => stream.ids().length === 1);
      await mail(keyA, inboxA2, inboxA, 'After the cut');
      await until(() => stream.ids().length === 2);
    } finally {
      stream.close();
    }
    await until(() => ctx.deps.events.size === 0);
  });

  it('leaves nothing behind when 100 clients disconnect at once', async () => {
    const after = await lastId(inB());
    // Of the mail's two events (message.sent, message.received: a send to its own inbox), one: under load the feed
    // read both in one batch, and no stream ever held exactly one.
    const streams = Array.from({ length: 100 }, () =>
      openStream(`/v1/events/stream?after=${after}&types=message.received`, keyB),
    );
    // A hundred streams' key checks and backlog reads share the test's pool of 4 connections: on a
    // loaded CI machine the delivery to all of them once took over 10 s.
    await until(() => ctx.deps.feed.size === 100 && streams.every((stream) => stream.status === 200), 40_000);
    // A stream that holds the first mail's event is past its backlog's read (which follows its 200).
    await mail(keyB, inboxB, inboxB, 'To a hundred streams');
    await until(() => streams.every((stream) => stream.ids().length === 1), 40_000);
    // The process's live feed reads a commit once for all of them: one read per stream would make 100.
    const recorded = recordQueries();
    await mail(keyB, inboxB, inboxB, 'Once more to a hundred streams');
    await until(() => streams.every((stream) => stream.ids().length === 2), 40_000);
    const reads = recorded().filter(readsEvents).length;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThan(10);
    for (const stream of streams) stream.close();
    await until(() => ctx.deps.feed.size === 0 && ctx.deps.events.size === 0);
    // No pool connection held by a stream that ended.
    await until(() => ctx.db.pool.totalCount === ctx.db.pool.idleCount);
    // The app still answers, and streams again.
    const again = openStream(`/v1/events/stream?after=${after}`, keyB);
    await until(() => again.status === 200);
    await mail(keyB, inboxB, inboxB, 'After the storm');
    await until(() => again.ids().length >= 1);
    again.close();
    await until(() => ctx.deps.events.size === 0);
  }, 120_000);
});

describe('a key revoked while its request waits or streams', () => {
  it('ends a stream on this replica, and on another once its 2 s of trust are over, before either sends another event', async () => {
    const reader = await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, permissions: ['read'] });
    const other = await ctx.replica();
    const otherServer = other.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => otherServer.once('listening', resolve));
    const otherUrl = `http://127.0.0.1:${(otherServer.address() as AddressInfo).port}`;
    const after = await lastId(inA());
    const here = openStream(`/v1/events/stream?after=${after}`, reader.key);
    const there = openStream(`/v1/events/stream?after=${after}`, reader.key, {}, { baseUrl: otherUrl });
    try {
      await until(() => here.status === 200 && there.status === 200);
      await as(ctx.app, OPERATOR_KEY).delete(`/v1/api-keys/${reader.id}`).expect(204);
      await new Promise((resolve) => setTimeout(resolve, 2200));
      await mail(keyA, inboxA2, inboxA, 'Mail after the revocation');
      await until(() => here.ended && there.ended);
      for (const stream of [here, there]) {
        expect(stream.ids()).toEqual([]);
        expect(stream.text()).toContain(': This API key has been revoked');
      }
    } finally {
      here.close();
      there.close();
      otherServer.closeAllConnections();
      await new Promise((resolve) => otherServer.close(resolve));
      await other.close();
    }
  });

  it('reads the keys of many streams in one query when an event reaches them', async () => {
    const keys = await Promise.all(
      Array.from(
        { length: 20 },
        async () => (await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, permissions: ['read'] })).key,
      ),
    );
    const after = await lastId(inA());
    const streams = keys.map((key) => openStream(`/v1/events/stream?after=${after}&inbox_id=${inboxA.id}`, key));
    try {
      await until(() => streams.every((stream) => stream.status === 200));
      const queries = recordQueries();
      let texts: string[] = [];
      try {
        await mail(keyA, inboxA2, inboxA, 'To twenty streams');
        await until(() => streams.every((stream) => stream.ids().length === 1));
      } finally {
        texts = queries();
      }
      // Reads of keys by id (a look-up by secret names secret_hash; a send holds its key in SQL of its own).
      const byId = texts.filter((text) => /FROM "public"\."api_keys" WHERE/.test(text) && !text.includes('secret_hash'));
      expect(byId).toHaveLength(1);
    } finally {
      for (const stream of streams) stream.close();
    }
    await until(() => ctx.deps.events.size === 0);
  });

  it('answers a long-poll 401, not the events that came after the revocation', async () => {
    const reader = await createKey(ctx.app, OPERATOR_KEY, { organization_id: orgA.id, permissions: ['read'] });
    const poll = as(ctx.app, reader.key)
      .get(`/v1/events?after=${await lastId(inA())}&wait=20`)
      .then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await as(ctx.app, OPERATOR_KEY).delete(`/v1/api-keys/${reader.id}`).expect(204);
    await mail(keyA, inboxA2, inboxA, 'Long-poll after the revocation');
    const res = await poll;
    expect({ status: res.status, message: res.body.error?.message }).toEqual({
      status: 401,
      message: 'This API key has been revoked',
    });
  });
});

describe('clients that leave while their request is checked', () => {
  /** Sends the request and hangs up at once: gone before the handler's checks end (a closed page, a proxy's timeout). */
  const hangUp = (path: string, key: string) =>
    new Promise<void>((resolve) => {
      const socket = net.connect(Number(new URL(baseUrl).port), '127.0.0.1', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`, () => {
          socket.destroy();
          resolve();
        });
      });
      socket.on('error', () => resolve());
    });

  it('leave no stream on the live feed and no long-poll waiter behind', async () => {
    const after = await lastId(inB());
    for (let n = 0; n < 20; n += 1) await hangUp(`/v1/events/stream?after=${after}&inbox_id=${inboxB.id}`, keyB);
    for (let n = 0; n < 10; n += 1) await hangUp(`/v1/events?after=${after}&inbox_id=${inboxB.id}&wait=60`, keyB);
    // Their checks (the key, the cursor, the inbox) take milliseconds; a stream attached after its client left stayed forever.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect({ streams: ctx.deps.feed.size, waiters: ctx.deps.events.size }).toEqual({ streams: 0, waiters: 0 });
  });
});

describe('retention', () => {
  it('neither lists events past the retention nor takes them as cursors before the reconciler removes them', async () => {
    const first = await appendAlone(eventIn(inboxB.id, orgB.id));
    const old = await appendAlone(eventIn(inboxB.id, orgB.id));
    const kept = await appendAlone(eventIn(inboxB.id, orgB.id));
    await ctx.db.event.update({ where: { id: BigInt(old) }, data: { createdAt: new Date(Date.now() - 31 * 86_400_000) } });
    const res = await as(ctx.app, keyB).get(`/v1/events?after=${old}`);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 410, code: 'gone' });
    const stream = await as(ctx.app, keyB).get('/v1/events/stream').set('last-event-id', old);
    expect(stream.status).toBe(410);
    const listed = (await as(ctx.app, keyB).get(`/v1/events?after=${first}`).expect(200)).body.items;
    expect(listed.map((event: { id: number }) => String(event.id))).toEqual([kept]);
    // Another scope's cursor stays 404, aged or not.
    expect((await as(ctx.app, keyA).get(`/v1/events?after=${old}`)).status).toBe(404);
  });

  it('answers 410 for a cursor older than the events kept', async () => {
    const old = await appendAlone(eventIn(inboxB.id, orgB.id));
    const kept = await appendAlone(eventIn(inboxB.id, orgB.id));
    // Everything up to `old` is past the retention (last in this file: it removes the other tests' events).
    const aged = await ctx.db.event.updateMany({
      where: { id: { lte: BigInt(old) } },
      data: { createdAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    expect(await removeExpiredEvents(ctx.db, 30)).toBe(aged.count);
    const res = await as(ctx.app, keyB).get(`/v1/events?after=${old}`);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 410, code: 'gone' });
    expect((await as(ctx.app, keyB).get(`/v1/events?after=${kept}`).expect(200)).body.items).toEqual([]);
    await expect(checkCursor(ctx.db, { organizationId: orgB.id }, BigInt(old))).rejects.toMatchObject({ status: 410 });
  });

  it('resumes after its own cursor once the inbox holding the oldest events kept is deleted', async () => {
    const doomed = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'ev-doomed-oldest', organization_id: orgB.id });
    const cursor = await appendAlone(eventIn(doomed.id, orgB.id));
    const next = await appendAlone(eventIn(inboxB.id, orgB.id));
    // Every event before the cursor expires: the doomed inbox's event is then the oldest kept.
    await ctx.db.event.updateMany({
      where: { id: { lt: BigInt(cursor) } },
      data: { createdAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    await removeExpiredEvents(ctx.db, 30);
    await as(ctx.app, OPERATOR_KEY).delete(`/v1/inboxes/${doomed.id}`).expect(204);
    const page = (await as(ctx.app, keyB).get(`/v1/events?after=${cursor}`).expect(200)).body;
    expect(page.items.map((event: { id: number }) => event.id)).toEqual([Number(next)]);
    // Below the retention's horizon it is still 410, and past every id drawn 404.
    expect((await as(ctx.app, keyB).get(`/v1/events?after=${Number(cursor) - 1}`)).status).toBe(410);
    expect((await as(ctx.app, keyB).get(`/v1/events?after=${Number(next) + 1000}`)).status).toBe(404);
    // With no event kept at all, the cursor of the last one removed with its inbox still resumes.
    const last = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'ev-doomed-last', organization_id: orgB.id });
    await ctx.db.event.updateMany({ data: { createdAt: new Date(Date.now() - 31 * 86_400_000) } });
    await removeExpiredEvents(ctx.db, 30);
    const lastCursor = await appendAlone(eventIn(last.id, orgB.id));
    await as(ctx.app, OPERATOR_KEY).delete(`/v1/inboxes/${last.id}`).expect(204);
    expect(await ctx.db.event.count()).toBe(0);
    expect((await as(ctx.app, keyB).get(`/v1/events?after=${lastCursor}`).expect(200)).body).toEqual({
      items: [],
      next_after: Number(lastCursor),
    });
  });
});
