/**
 * kill -9 around approval and the send it leads to, then a restart on the same database and data
 * folder: the approved draft is sent exactly once (never twice, never lost). The service runs as
 * its own process (src/server.ts, with its job worker and reconciler) and kills itself at the named
 * step (TEST_CRASH_POINT); the transport is `local`, whose deliveries land in another inbox here.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { startService } from '@repo/testing';
import { createDatabaseClient, type Database } from '../../src/database.js';
import { appRoot, migrationsDir } from '../../src/paths.js';

jest.setTimeout(240_000);

let database: ScratchDatabase;
let dataDir: string;
let db: Database;

beforeAll(async () => {
  database = await createScratchDatabase({ label: 'inbox_draft_crash', migrationsDir });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-draft-crash-'));
  db = createDatabaseClient(database.url, 2);
});
afterAll(async () => {
  await db.$disconnect();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

function start(env: Record<string, string | undefined> = {}) {
  return startService('src/server.ts', {
    cwd: appRoot,
    env: {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      INBOX_EMAIL_DOMAIN: 'crash.test',
      INBOX_RATE_LIMIT_PER_MINUTE: '0',
      INBOX_SEND_LIMIT_PER_HOUR: '0',
      // Short: the restarted service takes the dead one's send for interrupted, and its draft's backstop job runs, at once.
      INBOX_SEND_LEASE_SECONDS: '1',
      INBOX_RECONCILE_INTERVAL_SECONDS: '1',
      INBOX_API_KEYS: undefined,
      ...env,
    },
    timeoutMs: 90_000,
    keepLogs: false,
  });
}

/** The few fields of the answers read here. */
interface Answer {
  id: string;
  email_address: string;
  draft: { id: string };
}

async function call(baseUrl: string, method: string, urlPath: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as Answer | undefined };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.each(['draft:approved', 'send:recorded', 'send:transport-done', 'draft:sent'])(
  'kill -9 at %s after an approval',
  (point) => {
    it('sends the approved draft exactly once after a restart', async () => {
      const tag = point.replace(/\W/g, '-');
      const setup = await start();
      const sender = (await call(setup.url, 'POST', '/v1/inboxes', { name: 's', email_username: `s-${tag}` })).body!;
      const recipient = (await call(setup.url, 'POST', '/v1/inboxes', { name: 'r', email_username: `r-${tag}` })).body!;
      expect((await call(setup.url, 'PATCH', `/v1/inboxes/${sender.id}`, { send_policy: 'approval' })).status).toBe(200);
      const held = await call(setup.url, 'POST', '/v1/messages', {
        inbox_id: sender.id,
        to: [recipient.email_address],
        subject: `Approved before ${point}`,
        body: 'Hello',
      });
      expect(held.status).toBe(202);
      const draftId = held.body!.draft.id;
      await setup.stop();

      const crashing = await start({ TEST_CRASH_POINT: point });
      const exited = once(crashing.child, 'exit');
      await call(crashing.url, 'POST', `/v1/drafts/${draftId}/approve`).catch(() => undefined);
      const [code, signal] = (await exited) as [number | null, string | null];
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });

      const restarted = await start();
      try {
        const draft = await until(
          () => db.draft.findUniqueOrThrow({ where: { id: draftId } }),
          (row) => row.status === 'sent',
        );
        expect(draft.status).toBe('sent');
        const delivered = await until(
          () => db.message.count({ where: { inboxId: recipient.id, direction: 'inbound' } }),
          (count) => count >= 1,
        );
        expect(delivered).toBe(1);
        // Whatever the crash left (a send marked failed, say), exactly one went out, and the draft names it.
        const sent = await db.message.findMany({ where: { inboxId: sender.id, direction: 'outbound', status: 'sent' } });
        expect(sent.map((message) => message.id)).toEqual([draft.messageId]);
        expect(await db.idempotencyKey.count({ where: { completedAt: null } })).toBe(0);
        // Approving again changes nothing.
        expect((await call(restarted.url, 'POST', `/v1/drafts/${draftId}/approve`)).status).toBe(409);
        await new Promise((resolve) => setTimeout(resolve, 3000));
        expect(await db.message.count({ where: { inboxId: recipient.id, direction: 'inbound' } })).toBe(1);
        expect(await db.event.count({ where: { type: 'draft.sent', data: { path: ['id'], equals: draftId } } })).toBe(1);
      } finally {
        await restarted.stop();
      }
    });
  },
);
