/**
 * Streams and waits under strain: a client that reads nothing holds a socket's buffer, not the
 * event log; while the process cannot open its LISTEN connection (the database full, failing
 * over) a long-poll still answers within its wait and a stream opens with its backlog; the
 * listener closes at shutdown even while it is retrying.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { closedPort } from '@repo/testing';
import { buildApp } from '../../src/app.js';
import { pgStatements } from '../../src/database.js';
import { createEventFeed } from '../../src/events/feed.js';
import { createEventListener, type EventListener } from '../../src/events/listener.js';
import { appendEvents, type NewEvent } from '../../src/events/log.js';
import { createInbox, OPERATOR_KEY } from '../api-keys/helpers.js';
import { createTestContext, type TestContext } from '../context.js';

// Reading 26 MB through a socket, beside the rest of CI's suites on two cores.
jest.setTimeout(120_000);

const EVENTS = 400;
const FILLER = 'x'.repeat(64 * 1024); // 400 × 64 KB: some 26 MB of backlog

let ctx: TestContext;
const servers: http.Server[] = [];

async function serve(app: http.RequestListener, sockets?: net.Socket[]): Promise<number> {
  const server = http.createServer(app);
  if (sockets) server.on('connection', (socket) => sockets.push(socket));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  ctx = await createTestContext({ INBOX_API_KEYS: OPERATOR_KEY, INBOX_RATE_LIMIT_PER_MINUTE: '0' });
  const inbox = await createInbox(ctx.app, OPERATOR_KEY, { email_username: 'strained' });
  for (let start = 0; start < EVENTS; start += 50) {
    const batch: NewEvent[] = Array.from({ length: 50 }, (_, n) => ({
      type: 'message.received',
      organizationId: inbox.organization_id,
      inboxId: inbox.id,
      threadId: null,
      messageId: null,
      data: { n: start + n, filler: FILLER },
    }));
    await appendEvents(pgStatements(ctx.db.pool), batch);
  }
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await ctx.close();
});

it('writes a stream only as fast as its client reads: one that reads nothing holds a buffer, not the log', async () => {
  const sockets: net.Socket[] = [];
  const port = await serve(ctx.app, sockets);
  const client = net.connect({ port, host: '127.0.0.1' });
  await new Promise((resolve) => client.once('connect', resolve));
  client.pause();
  client.write(`GET /v1/events/stream?after=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OPERATOR_KEY}\r\n\r\n`);
  try {
    let buffered = 0;
    for (let i = 0; i < 12; i++) {
      await delay(250);
      buffered = Math.max(buffered, ...sockets.filter((socket) => !socket.destroyed).map((socket) => socket.writableLength));
    }
    // Without waiting for 'drain' the server held the whole backlog (26 MB) for this client.
    expect(buffered).toBeLessThan(8 * 1024 * 1024);
    // Once it reads, it gets every event, in order.
    const ids: number[] = [];
    let text = '';
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => {
      text += chunk;
      for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n')) {
        const id = /^id: (\d+)$/m.exec(text.slice(0, end));
        if (id) ids.push(Number(id[1]));
        text = text.slice(end + 2);
      }
    });
    client.resume();
    for (const end = Date.now() + 90_000; ids.length < EVENTS && Date.now() < end;) await delay(50);
    expect(ids).toHaveLength(EVENTS);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  } finally {
    client.destroy();
  }
});

describe('while the LISTEN connection cannot be opened', () => {
  let events: EventListener;
  let base: string;
  beforeAll(async () => {
    events = createEventListener({
      connectionString: `postgresql://postgres@127.0.0.1:${await closedPort()}/x`,
      logger: ctx.deps.logger,
    });
    const feed = createEventFeed({ db: ctx.db, events, logger: ctx.deps.logger });
    base = `http://127.0.0.1:${await serve(buildApp({ ...ctx.deps, events, feed }))}`;
  });
  afterAll(() => events.close());
  const headers = { authorization: `Bearer ${OPERATOR_KEY}` };

  it('answers a long-poll within its wait, with what there is', async () => {
    const newest = (await (await fetch(`${base}/v1/events?after=0&limit=500`, { headers })).json()) as { next_after: number };
    const started = Date.now();
    const res = await fetch(`${base}/v1/events?after=${newest.next_after}&wait=1`, {
      headers,
      signal: AbortSignal.timeout(15_000),
    });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 200,
      body: { items: [], next_after: newest.next_after },
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('opens a stream and sends its backlog, keeping it open for the live events to come', async () => {
    const newest = (await (await fetch(`${base}/v1/events?after=0&limit=500`, { headers })).json()) as { next_after: number };
    const after = newest.next_after - 10; // the last ten events: a backlog, without 26 MB to read
    const res = await fetch(`${base}/v1/events/stream?after=${after}`, { headers, signal: AbortSignal.timeout(60_000) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    while ((text.match(/^id: /gm)?.length ?? 0) < 10) text += decoder.decode((await reader.read()).value, { stream: true });
    expect(text.match(/^id: \d+$/gm)).toEqual(Array.from({ length: 10 }, (_, i) => `id: ${after + i + 1}`));
    await reader.cancel();
  });

  it('closes the listener at once, retrying or not (a shutdown waits for it)', async () => {
    const listener = createEventListener({
      connectionString: `postgresql://postgres@127.0.0.1:${await closedPort()}/x`,
      logger: ctx.deps.logger,
    });
    const subscription = listener.subscribe(() => true);
    await delay(1500); // refused at once; a retry is due every second
    const closed = await Promise.race([listener.close().then(() => 'closed'), delay(5000, 'still closing', { ref: false })]);
    subscription.close();
    expect(closed).toBe('closed');
  });
});
