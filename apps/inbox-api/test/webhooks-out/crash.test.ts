/**
 * kill -9 of the service between the commit of an event's deliveries and their attempt: after a
 * restart on the same database the receiver gets the event exactly once, with the webhook-id the
 * delivery was given before the kill. The service runs as its own process (src/server.ts, which
 * starts the fan-out and the delivery jobs) and kills itself at TEST_CRASH_POINT.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@repo/db/dev';
import { startService } from '@repo/testing';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { createDatabaseClient, type Database } from '../../src/database.js';
import { appRoot, migrationsDir } from '../../src/paths.js';
import { type Receiver, startReceiver } from './receiver.js';

jest.setTimeout(180_000);

let database: ScratchDatabase;
let dataDir: string;
let db: Database;
let receiver: Receiver;

beforeAll(async () => {
  database = await createScratchDatabase({ label: 'inbox_hooks_crash', migrationsDir });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-hooks-crash-'));
  db = createDatabaseClient(database.url, 2);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
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
      INBOX_EMAIL_DOMAIN: 'hooks-crash.test',
      INBOX_RATE_LIMIT_PER_MINUTE: '0',
      INBOX_SEND_LIMIT_PER_HOUR: '0',
      INBOX_API_KEYS: undefined,
      INBOX_WEBHOOK_ALLOW_PRIVATE: 'true',
      INBOX_WEBHOOK_SWEEP_SECONDS: '1',
      ...env,
    },
    timeoutMs: 90_000,
    keepLogs: false,
  });
}

async function call(baseUrl: string, method: string, urlPath: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, unknown> };
}

it('delivers an event whose deliveries committed before a kill -9 once after the restart, with the same webhook-id', async () => {
  const setup = await start();
  const sender = (await call(setup.url, 'POST', '/v1/inboxes', { name: 'Sender', email_username: 'sender' })).body;
  const recipient = (await call(setup.url, 'POST', '/v1/inboxes', { name: 'Agent', email_username: 'agent' })).body;
  const created = await call(setup.url, 'POST', '/v1/webhooks', {
    url: receiver.url('/ok/crash'),
    event_types: ['message.received'],
    inbox_ids: [recipient.id],
  });
  expect(created.status).toBe(201);
  const webhook = created.body as { id: string; secret: string };
  await setup.stop();

  const crashing = await start({ TEST_CRASH_POINT: 'webhook-dispatch:committed' });
  const exited = once(crashing.child, 'exit');
  await call(crashing.url, 'POST', '/v1/messages', {
    inbox_id: sender.id,
    to: [recipient.email_address],
    subject: 'Survives a crash',
    body: 'Hello',
  }).catch(() => undefined);
  const [code, signal] = (await exited) as [number | null, string | null];
  expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });

  // Committed, not attempted.
  const [recorded, ...more] = await db.webhookDelivery.findMany({ where: { webhookId: webhook.id } });
  expect(more).toEqual([]);
  expect(recorded).toMatchObject({ status: 'pending', attempts: 0 });
  expect(receiver.received.filter((r) => r.path === '/ok/crash')).toHaveLength(0);

  const restarted = await start();
  try {
    const [request] = await receiver.waitFor('/ok/crash', 1, 60_000);
    expect(request!.headers['webhook-id']).toBe(recorded!.id);
    const event = new StandardWebhook(webhook.secret).verify(request!.body, request!.headers as Record<string, string>);
    expect(event).toMatchObject({ type: 'message.received', inbox_id: recipient.id, data: { subject: 'Survives a crash' } });
    // Settled: delivered once, and nothing more arrives (the sweep runs every second).
    for (let i = 0; i < 50; i++) {
      if ((await db.webhookDelivery.findUniqueOrThrow({ where: { id: recorded!.id } })).status === 'delivered') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(receiver.received.filter((r) => r.path === '/ok/crash')).toHaveLength(1);
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { id: recorded!.id } })).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 204,
    });
    expect(await db.webhookDelivery.count()).toBe(1);
  } finally {
    await restarted.stop();
  }
});
