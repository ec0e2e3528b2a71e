/**
 * A real inbox-api for inbox-mcp's tests: its server run from source (as `pnpm dev` would) on a
 * scratch database migrated with its own migrations. Mail goes through the `local` provider, so
 * a message sent to another inbox of the service arrives in it, as a reply would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase } from '@repo/db/dev';
import { closedPort, startService } from '@repo/testing';
import { appRoot } from '../../src/paths.js';

export const inboxApiRoot = path.resolve(appRoot, '..', 'inbox-api');
export const EMAIL_DOMAIN = 'mcp.test';

export interface InboxApi {
  url: string;
  process: Awaited<ReturnType<typeof startService>>;
  /** The REST API's request lines so far (method and url), to see what inbox-mcp asked of it. */
  requests(): string[];
  stop(): Promise<void>;
}

/** `apiKeys`: INBOX_API_KEYS; none, the API is open to any caller. */
export async function startInboxApi(label: string, options: { apiKeys?: string[] } = {}): Promise<InboxApi> {
  const database = await createScratchDatabase({ label, migrationsDir: path.join(inboxApiRoot, 'prisma', 'migrations') });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `${label}-`));
  // A port known in advance: download_url is built from PUBLIC_BASE_URL, which must name it.
  const port = await closedPort();
  const process = await startService('src/server.ts', {
    cwd: inboxApiRoot,
    env: {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'info',
      EMAIL_PROVIDER: 'local',
      INBOX_EMAIL_DOMAIN: EMAIL_DOMAIN,
      INBOX_API_KEYS: options.apiKeys?.join(','),
      INBOX_RATE_LIMIT_PER_MINUTE: '0',
      INBOX_SEND_LIMIT_PER_HOUR: '0',
      LLM_PROVIDER: undefined,
    },
    timeoutMs: 90_000,
  });
  return {
    url: process.url,
    process,
    requests: () =>
      process.logs.flatMap((line) => {
        const req = line.req as { method?: string; url?: string } | undefined;
        return line.msg === 'request completed' && req ? [`${req.method} ${req.url}`] : [];
      }),
    async stop() {
      await process.stop();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

interface Inbox {
  id: string;
  email_address: string;
}

/** Two inboxes of one key, alice writing to bob: the threads `wait_for_reply` waits on, and bob's replies. */
export interface Correspondence {
  alice: Inbox;
  bob: Inbox;
  /** A new thread from alice to bob; bob's copy of it is where a reply is sent from. */
  newThread(subject: string): Promise<{ threadId: string; bobThreadId: string }>;
  /** Bob's reply in his copy of a thread: the message alice's wait is for. */
  reply(bobThreadId: string, body: string): Promise<void>;
}

/** inbox-api called directly with `key`, as another party would; its parsed JSON answer. */
export async function callWithKey(inboxApi: InboxApi, key: string, method: string, urlPath: string, body?: unknown) {
  const res = await fetch(`${inboxApi.url}${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${await res.text()}`);
  // A 204 (a delete) has no body.
  const text = await res.text();
  return text === '' ? undefined : JSON.parse(text);
}

/** Creates alice's and bob's inboxes with `key`. */
export async function startCorrespondence(inboxApi: InboxApi, key: string): Promise<Correspondence> {
  const rest = (method: string, urlPath: string, body?: unknown) => callWithKey(inboxApi, key, method, urlPath, body);
  const alice: Inbox = await rest('POST', '/v1/inboxes', { name: 'Alice', email_username: 'alice' });
  const bob: Inbox = await rest('POST', '/v1/inboxes', { name: 'Bob', email_username: 'bob' });
  return {
    alice,
    bob,
    async newThread(subject) {
      const sent = await rest('POST', '/v1/messages', { inbox_id: alice.id, to: [bob.email_address], subject, body: 'Well?' });
      const [received] = (await rest('GET', `/v1/messages?inbox_id=${bob.id}&limit=1`)).items;
      return { threadId: sent.thread_id, bobThreadId: received.thread_id };
    },
    async reply(bobThreadId, body) {
      await rest('POST', '/v1/messages', {
        inbox_id: bob.id,
        to: [alice.email_address],
        subject: 'Re',
        body,
        reply_to_thread_id: bobThreadId,
      });
    },
  };
}
