import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createMetrics } from '@repo/http';
import type { Resolve } from '../../src/adapters/agents/index.js';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import type { TestContext } from '../context.js';

/**
 * Another instance of the app on the context's database (a replica, or the same service with
 * other settings), with agent clients and counters of its own, the context's key for agent ids,
 * and a data folder of its own (the warehouse's file is the context's). `resolve` replaces DNS
 * for agents' host names. Close it before the context.
 */
export async function appInstance(ctx: TestContext, settings: Partial<Config> = {}, options: { resolve?: Resolve } = {}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-api-instance-'));
  const { deps, close } = await createDeps(
    { ...ctx.deps.config, DATA_DIR: dataDir, COLLAB_AGENT_ID_SECRET: ctx.deps.agentIdSecret, ...settings },
    { db: ctx.db, logger: ctx.deps.logger, metrics: createMetrics({ service: 'collab-api', collectDefault: false }) },
    options,
  );
  return {
    app: buildApp(deps),
    deps,
    async close() {
      await close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
