import { createTestContext, type TestContext } from '../context.js';
import { BadRequestError } from '@repo/errors';
import { decodePageToken } from '../../src/shared/schemas.js';
import { as, createInbox, createKey, OPERATOR_KEY } from '../api-keys/helpers.js';

let ctx: TestContext;
let operator: ReturnType<typeof as>;
let agent: { id: string; email_address: string };
let carol: { id: string; email_address: string };
let erin: { id: string; email_address: string };

const file = { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('attached').toString('base64') };

beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY, INBOX_RATE_LIMIT_PER_MINUTE: '0' });
  operator = as(ctx.app, OPERATOR_KEY);
  agent = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'agent' });
  carol = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'carol' });
  erin = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'erin' });
});
afterAll(() => ctx.close());

const send = (from: { id: string }, body: Record<string, unknown>) =>
  operator
    .post('/v1/messages', { inbox_id: from.id, to: [agent.email_address], subject: 'Hello', body: 'Hi', ...body })
    .expect(201);

type Item = { id: string; subject: string; labels?: string[] };
async function list(path: string): Promise<{ items: Item[]; total: number; count: number; next_page_token: string | null }> {
  const res = await operator.get(path);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Every item of a list, page by page through next_page_token. */
async function walk(path: string, limit: number): Promise<Item[]> {
  const items: Item[] = [];
  let token: string | null = null;
  do {
    const body = await list(`${path}&limit=${limit}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    items.push(...body.items);
    token = body.next_page_token;
  } while (token);
  return items;
}

describe('filters of GET /v1/messages', () => {
  let start: string;
  let middle: string;
  beforeAll(async () => {
    start = new Date().toISOString();
    await send(carol, { subject: 'From carol, with a file', attachments: [file] });
    await send(carol, { subject: 'From carol, plain' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    middle = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await send(erin, { subject: 'From erin', cc: ['x@example.com'] });
    await send(agent, { to: ['zed@example.com'], subject: 'Sent by the agent', labels: ['crm'] });
    const plain = (await list(`/v1/messages?inbox_id=${agent.id}&q=plain`)).items[0]!;
    await operator.patch(`/v1/messages/${plain.id}`, { add_labels: ['todo'], remove_labels: ['unread'] }).expect(200);
  });

  const subjects = async (query: string) =>
    (await list(`/v1/messages?inbox_id=${agent.id}&${query}`)).items.map((i) => i.subject);

  it('filters by labels (all must match), direction, sender, time and attachments', async () => {
    expect(await subjects('labels=received')).toEqual(['From erin', 'From carol, plain', 'From carol, with a file']);
    expect(await subjects('labels=received,unread')).toEqual(['From erin', 'From carol, with a file']);
    expect(await subjects('labels=received&labels=todo')).toEqual(['From carol, plain']);
    expect(await subjects('labels=received,todo,unread')).toEqual([]);
    expect(await subjects('labels=SENT')).toEqual(['Sent by the agent']);
    expect(await subjects('direction=outbound')).toEqual(['Sent by the agent']);
    expect(await subjects('direction=inbound&from=CAROL@')).toEqual(['From carol, plain', 'From carol, with a file']);
    expect(await subjects('from=%25')).toEqual([]);
    expect(await subjects('has_attachments=true')).toEqual(['From carol, with a file']);
    expect(await subjects('has_attachments=false&direction=inbound')).toEqual(['From erin', 'From carol, plain']);
    expect(await subjects(`after=${middle}`)).toEqual(['Sent by the agent', 'From erin']);
    expect(await subjects(`after=${start}&before=${middle}`)).toEqual(['From carol, plain', 'From carol, with a file']);
    expect(await subjects('q=carol&labels=unread')).toEqual(['From carol, with a file']);
    expect(await subjects('q=from&has_attachments=false&direction=inbound')).toEqual(['From erin', 'From carol, plain']);
    const counted = await list(`/v1/messages?inbox_id=${agent.id}&direction=inbound&limit=1`);
    expect(counted).toMatchObject({ count: 1, total: 3 });
  });

  it('still needs inbox_id or thread_id, and refuses bad filters with 400', async () => {
    expect((await operator.get('/v1/messages?labels=received')).status).toBe(400);
    for (const query of [
      'labels=',
      `labels=${'a'.repeat(65)}`,
      'labels=bad%01label',
      'labels=nul%00',
      "labels=x'%3B%20DROP%20TABLE%20messages",
      'direction=sideways',
      'from=a%0Ab',
      'after=yesterday',
      'before=2026-13-45T00:00:00Z',
      // Well-formed, but before year 1 in UTC: Postgres refused them (500).
      'after=0000-01-01T00:00:00Z',
      'before=0001-01-01T00:00:00%2B01:00',
      'has_attachments=maybe',
      'page_token=garbage',
      'page_token=',
      `page_token=${Buffer.from('["threads",{"t":"2026-01-01T00:00:00.000Z"},"x"]').toString('base64url')}`,
      `page_token=${Buffer.from('["messages",{"t":"not a date"},"x"]').toString('base64url')}`,
      `page_token=${Buffer.from('["messages",1,2,3]').toString('base64url')}`,
    ]) {
      const res = await operator.get(`/v1/messages?inbox_id=${agent.id}&${query}`);
      expect({ query, status: res.status, code: typeof res.body.error?.code }).toEqual({ query, status: 400, code: 'string' });
    }
    const first = await list(`/v1/messages?inbox_id=${agent.id}&limit=1`);
    const both = await operator.get(`/v1/messages?inbox_id=${agent.id}&offset=1&page_token=${first.next_page_token}`);
    expect(both.status).toBe(400);
  });
});

describe('cursor paging', () => {
  let inbox: { id: string; email_address: string };
  beforeAll(async () => {
    inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'pages' });
    for (let i = 0; i < 7; i++) {
      await operator
        .post('/v1/messages', { inbox_id: inbox.id, to: ['p@example.com'], subject: `Leaf ${i}`, body: 'x' })
        .expect(201);
    }
  });

  it('neither skips nor repeats while messages arrive between pages', async () => {
    const expected = (await list(`/v1/messages?inbox_id=${inbox.id}&limit=200`)).items.map((item) => item.id);
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const body = await list(`/v1/messages?inbox_id=${inbox.id}&limit=3${token ? `&page_token=${token}` : ''}`);
      expect(body.total).toBe(7 + pages);
      seen.push(...body.items.map((item) => item.id));
      token = body.next_page_token;
      // A new message lands between pages: newest first, it is before the cursor and never shows up.
      await operator.post('/v1/messages', { inbox_id: inbox.id, to: ['p@example.com'], subject: 'Late', body: 'x' }).expect(201);
      pages += 1;
    } while (token);
    expect(seen).toEqual(expected);
    expect(pages).toBe(3);
  });

  it('pages threads by last activity: a thread that moves ahead of the cursor is not listed twice, and leads the next walk', async () => {
    const box = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'movers' });
    const threads: string[] = [];
    for (const subject of ['T0', 'T1', 'T2']) {
      const sent = await operator
        .post('/v1/messages', { inbox_id: box.id, to: ['p@example.com'], subject, body: 'x' })
        .expect(201);
      threads.push(sent.body.thread_id);
      await new Promise((resolve) => setTimeout(resolve, 3)); // distinct last_message_at (ms), so the order is by time
    }
    const walk = async (between?: () => Promise<unknown>) => {
      const seen: string[] = [];
      let token: string | null = null;
      do {
        const body = await list(`/v1/threads?inbox_id=${box.id}&limit=1${token ? `&page_token=${token}` : ''}`);
        seen.push(...body.items.map((item) => item.id));
        token = body.next_page_token;
        if (seen.length === 1) await between?.();
      } while (token);
      return seen;
    };
    // After the first page (T2), T0 gets a reply and moves to the front, ahead of the cursor: the
    // walk lists T1 and not T0 (the threads' documented exception); T2, already listed, stays once.
    const moved = await walk(() =>
      operator
        .post('/v1/messages', {
          inbox_id: box.id,
          to: ['p@example.com'],
          subject: 'Re: T0',
          body: 'y',
          reply_to_thread_id: threads[0],
        })
        .expect(201),
    );
    expect(moved).toEqual([threads[2], threads[1]]);
    expect(await walk()).toEqual([threads[0], threads[2], threads[1]]);
  });

  it('pages searches, and keeps offset and total working', async () => {
    const all = (await list(`/v1/messages?inbox_id=${inbox.id}&q=leaf&limit=200`)).items.map((item) => item.id);
    expect(all).toHaveLength(7);
    expect((await walk(`/v1/messages?inbox_id=${inbox.id}&q=leaf`, 2)).map((item) => item.id)).toEqual(all);
    const second = await list(`/v1/messages?inbox_id=${inbox.id}&q=leaf&limit=2&offset=2`);
    expect(second).toMatchObject({ count: 2, total: 7 });
    expect(second.items.map((item) => item.id)).toEqual(all.slice(2, 4));
    const last = await list(`/v1/messages?inbox_id=${inbox.id}&q=leaf&limit=7`);
    expect(last.next_page_token).toBeNull();
  });

  it('pages every list: inboxes, organizations, API keys, attachments, threads', async () => {
    for (let i = 0; i < 3; i++) {
      await createKey(ctx.app, OPERATOR_KEY, { organization_id: 'default', permissions: ['read'] });
      await operator.post('/v1/organizations', { name: `Org ${i}` }).expect(201);
      await send(carol, { subject: `Attached ${i}`, attachments: [file, file] });
    }
    for (const path of [
      '/v1/inboxes?x=1',
      '/v1/organizations?x=1',
      '/v1/api-keys?x=1',
      `/v1/attachments?inbox_id=${agent.id}`,
      `/v1/threads?inbox_id=${agent.id}`,
    ]) {
      const clean = path.replace('?x=1', '?');
      const all = (await list(`${clean}&limit=200`)).items.map((item) => item.id);
      expect(all.length).toBeGreaterThanOrEqual(3);
      expect((await walk(clean, 2)).map((item) => item.id)).toEqual(all);
      const stray = await operator.get(
        `${clean}&page_token=${Buffer.from('["messages",{"t":"2026-01-01T00:00:00.000Z"},"x"]').toString('base64url')}`,
      );
      expect({ path, status: stray.status }).toEqual({ path, status: 400 });
      // A token of this list, forged with values its columns cannot hold: an id that is no UUID, a date out of range.
      const name = new URL(clean, 'http://x').pathname.split('/')[2]!;
      for (const forged of [
        [{ t: '2026-01-01T00:00:00.000Z' }, 'x'],
        [{ t: '-271821-04-20T00:00:00.000Z' }, '00000000-0000-4000-8000-000000000000'],
        [{ t: '+275760-09-13T00:00:00.000Z' }, '00000000-0000-4000-8000-000000000000'],
      ]) {
        const token = Buffer.from(JSON.stringify([name, ...forged])).toString('base64url');
        const res = await operator.get(`${clean}&page_token=${token}`);
        expect({ path, forged, status: res.status }).toEqual({
          path,
          forged,
          status: name === 'organizations' && forged[1] === 'x' ? 200 : 400,
        });
      }
    }
  });
});

describe('GET /v1/threads', () => {
  let inbox: { id: string; email_address: string };
  beforeAll(async () => {
    inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'threads' });
  });

  it('lists threads by last activity with message_count, participants and the union of their labels', async () => {
    const first = (
      await operator
        .post('/v1/messages', {
          inbox_id: carol.id,
          to: [inbox.email_address],
          subject: 'Quote',
          body: 'Price?',
          attachments: [file],
        })
        .expect(201)
    ).body;
    const received = (await list(`/v1/messages?inbox_id=${inbox.id}`)).items[0]!;
    await operator.post(`/v1/messages/${received.id}/reply`, { body: '42', labels: ['quoted'] }).expect(201);
    await operator
      .post('/v1/messages', { inbox_id: erin.id, to: [inbox.email_address], subject: 'Other', body: 'x' })
      .expect(201);
    const threads = await list(`/v1/threads?inbox_id=${inbox.id}`);
    expect(threads.items).toEqual([
      expect.objectContaining({
        subject: 'Other',
        message_count: 1,
        labels: ['received', 'unread'],
        participants: [erin.email_address, inbox.email_address],
      }),
      expect.objectContaining({
        subject: 'Quote',
        message_count: 2,
        labels: ['quoted', 'received', 'sent', 'unread'],
        participants: [carol.email_address, inbox.email_address],
      }),
    ]);
    expect(threads).toMatchObject({ count: 2, total: 2, next_page_token: null });
    expect(first.subject).toBe('Quote');
    const titles = async (query: string) => (await list(`/v1/threads?inbox_id=${inbox.id}&${query}`)).items.map((t) => t.subject);
    expect(await titles('labels=sent,received')).toEqual(['Quote']);
    expect(await titles('labels=quoted,other')).toEqual([]);
    expect(await titles('direction=outbound')).toEqual(['Quote']);
    expect(await titles('from=erin@')).toEqual(['Other']);
    expect(await titles('has_attachments=true')).toEqual(['Quote']);
    expect(await titles('has_attachments=false')).toEqual(['Other']);
    expect(await titles(`before=${new Date(Date.now() + 60_000).toISOString()}&after=2020-01-01T00:00:00Z`)).toEqual([
      'Other',
      'Quote',
    ]);
    for (const bad of ['labels=%00', 'direction=x', 'after=x', 'has_attachments=1', 'page_token=x', 'unknown=1']) {
      expect((await operator.get(`/v1/threads?inbox_id=${inbox.id}&${bad}`)).status).toBe(400);
    }
  });
});

describe('decodePageToken', () => {
  const token = (...values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
  it('refuses values the key columns cannot hold, as a token this list did not give', () => {
    const shape = ['date', 'bigint'] as const;
    expect(decodePageToken({ page_token: token('d', { t: '2026-01-01T00:00:00.000Z' }, { b: '42' }) }, 'd', shape)).toEqual([
      new Date('2026-01-01T00:00:00.000Z'),
      42n,
    ]);
    for (const bigint of ['9223372036854775808', '-9223372036854775809', '9999999999999999999']) {
      expect(() =>
        decodePageToken({ page_token: token('d', { t: '2026-01-01T00:00:00.000Z' }, { b: bigint }) }, 'd', shape),
      ).toThrow(BadRequestError);
    }
    expect(
      decodePageToken({ page_token: token('d', { t: '2026-01-01T00:00:00.000Z' }, { b: '9223372036854775807' }) }, 'd', shape),
    ).toEqual([new Date('2026-01-01T00:00:00.000Z'), 9223372036854775807n]);
  });
});
