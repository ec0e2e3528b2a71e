import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import path from 'node:path';
import type { z } from 'zod';
import { createLogger, createMetrics } from '@repo/http';
import { configSchema as collabApiConfig } from '../../apps/collab-api/src/config.js';
import { buildWorkerApp as collabWorkerApp } from '../../apps/collab-api/src/worker.js';
import { createTestContext as collabApiContext } from '../../apps/collab-api/test/context.js';
import { configSchema as inboxApiConfig } from '../../apps/inbox-api/src/config.js';
import { createTestContext as inboxApiContext } from '../../apps/inbox-api/test/context.js';
import { InboxApiClient } from '../../apps/inbox-mcp/src/api-client.js';
import { configSchema as inboxMcpConfig, parseCommandLine } from '../../apps/inbox-mcp/src/config.js';
import { buildHttpApp } from '../../apps/inbox-mcp/src/http-app.js';
import { createMcpServer } from '../../apps/inbox-mcp/src/mcp-server.js';
import { taskKeyFrom } from '../../apps/inbox-mcp/src/tasks/task-id.js';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

/** The one Node.js major of the project (`.node-version`): development, tests, CI and the images. */
export const nodeMajor = readFileSync(path.join(repoRoot, '.node-version'), 'utf8').trim().split('.')[0]!;

/** A deployed service, as the checks need to know it: its app's own code, not a copy of its facts. */
export interface ServiceUnderTest {
  /** Package, image, Dockerfile, Kubernetes folder and workload name alike. */
  name: string;
  configSchema: z.ZodObject<{ PORT: z.ZodType<number> }>;
  /** Settings the entry point reads from its command-line arguments; absent: it takes none. */
  settingsFromArgs?: (args: string[]) => Record<string, string | undefined>;
  /** Parsed settings the deployment depends on. */
  deployedSettings: Record<string, unknown>;
  /** Whether a migration Job migrates its database before the pods use it. */
  migrates: boolean;
  /**
   * A second Deployment that runs the same image and entry point with the same settings but for
   * `deployedSettings`, which it sets itself (collab-api's background worker); not behind the Service.
   */
  worker?: { name: string; deployedSettings: Record<string, unknown> };
  /** The app built in this process, as its own tests build it, to request the probe paths from; and the worker's. */
  start(): Promise<{ app: RequestListener; workerApp?: RequestListener; close(): Promise<void> }>;
}

export const services: ServiceUnderTest[] = [
  {
    name: 'inbox-api',
    configSchema: inboxApiConfig,
    deployedSettings: { HOST: '0.0.0.0', MIGRATE_ON_START: false },
    migrates: true,
    start: () => inboxApiContext(),
  },
  {
    name: 'collab-api',
    configSchema: collabApiConfig,
    // BigQuery loads files from Cloud Storage, and jobs run in collab-worker, not in the API's pods.
    deployedSettings: {
      HOST: '0.0.0.0',
      MIGRATE_ON_START: false,
      COLLAB_WAREHOUSE: 'bigquery',
      STORAGE_BACKEND: 'gcs',
      COLLAB_WORKER: 'off',
    },
    migrates: true,
    worker: { name: 'collab-worker', deployedSettings: { COLLAB_WORKER: 'only' } },
    start: async () => {
      const context = await collabApiContext();
      return { app: context.app, workerApp: collabWorkerApp(context.deps), close: () => context.close() };
    },
  },
  {
    name: 'inbox-mcp',
    configSchema: inboxMcpConfig,
    settingsFromArgs: (args) => parseCommandLine(args, {}).env,
    deployedSettings: { HOST: '0.0.0.0', MCP_TRANSPORT: 'http' },
    migrates: false,
    start: () => {
      const logger = createLogger({ service: 'inbox-mcp', level: 'silent' });
      const app = buildHttpApp({
        transport: 'http',
        // The probes never open a task.
        createServer: (api, reach) => createMcpServer({ api, logger, taskKey: taskKeyFrom('probe') }, reach),
        // The probes never reach inbox-api.
        api: new InboxApiClient({ baseUrl: 'http://127.0.0.1:8000' }),
        allowAnonymous: false,
        logger,
        metrics: createMetrics({ service: 'inbox-mcp', collectDefault: false }),
        host: '0.0.0.0',
        trustProxyHops: 0,
      });
      return Promise.resolve({ app, close: () => Promise.resolve() });
    },
  },
];
