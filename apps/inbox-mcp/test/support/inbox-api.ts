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
