import path from 'node:path';
import { type CrashPoint, crashPoints, generatedSecret } from '@repo/config';
import type { Logger, Metrics } from '@repo/http';
import { connectRedis } from '@repo/rate-limit';
import { createObjectStorage, type ObjectStorage } from '@repo/storage';
import { type AgentClients, createAgentClients, type Resolve } from './adapters/agents/index.js';
import { createNotifier, type Notifier } from './adapters/notifications/index.js';
import { createWarehouse, type Warehouse } from './adapters/warehouse/index.js';
import { createQueryEngine, type QueryEngine } from './adapters/warehouse/query/index.js';
import { type AgentRequestLimit, createAgentRequestLimit } from './agents/rate-limits.js';
import { createTokenVerifier, type TokenVerifier } from './auth/index.js';
import type { Config } from './config.js';
import type { Database } from './database.js';
import { createJobQueue, type JobQueue } from './jobs/queue.js';
import { resolveAuthSettings } from './local-secret.js';
import { maxConstantListElements } from './memory/budget.js';
import { defaultDataDir } from './paths.js';
import { QueryJobEnds } from './query-jobs/ends.js';
import type { ChangeDeps } from './warehouse-changes/index.js';

/** Everything the app talks to, built by createDeps (for server.ts and tests) and passed to buildApp. */
export interface Deps {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: Metrics;
  /** Verifies the bearer tokens of /api/v1 requests. */
  tokens: TokenVerifier;
  /** Mirrors datasets and tables. */
  warehouse: Warehouse;
  /** Runs query jobs and keeps their results, on the warehouse's engine (DuckDB or BigQuery). */
  queryEngine: QueryEngine;
  /** Where crash tests stop the process (TEST_CRASH_POINT); does nothing otherwise. */
  crashPoint: CrashPoint;
  /** Calls A2A and MCP agents, only at addresses the rules allow (src/adapters/agents). */
  agents: AgentClients;
  /** Counts the requests sent to each agent against its rate limits (in Redis with REDIS_URL). */
  agentRequests: AgentRequestLimit;
  /** Binds the task, context and session ids of agents to tenants (src/agents/task-ids.ts). */
  agentIdSecret: string;
  /** Uploaded files of load jobs (local folder under DATA_DIR, or Cloud Storage). */
  storage: ObjectStorage;
  /** Background jobs (src/jobs): queued by the API, run by the worker. */
  queue: JobQueue;
  /** Signs the upload links this service serves itself (local storage). */
  uploadUrlSecret: string;
  /** Sends notification e-mails (.eml files under DATA_DIR, or SMTP); only background jobs call it. */
  notifier: Notifier;
  /** The time of the rules that depend on it (approval expiry); tests set another. */
  now: () => Date;
  /** Wakes requests that wait for a query job's results when this process's worker is done with the job. */
  queryJobEnds: QueryJobEnds;
}

/**
 * Builds the app's adapters from its configuration: the token verifier (with the development
 * secret under DATA_DIR when no other is configured), the warehouse (DuckDB under DATA_DIR by
 * default) and the agents' clients and rate limits. `close` releases what they hold. `resolve`
 * replaces the system's resolution of agents' host names (tests).
 */
export async function createDeps(
  config: Config,
  // databaseUrl: the embedded database's, when DATABASE_URL is unset (pg-boss connects on its own).
  base: { db: Database; logger: Logger; metrics: Metrics; databaseUrl?: string },
  options: { resolve?: Resolve } = {},
): Promise<{ deps: Deps; close: () => Promise<void> }> {
  const dataDir = config.DATA_DIR ?? defaultDataDir;
  const auth = await resolveAuthSettings(config, dataDir);
  if (auth.generatedSecretFile) {
    base.logger.warn(
      { secretFile: auth.generatedSecretFile },
      'COLLAB_JWT_SECRET is not set: tokens are signed with a secret generated for this data folder (development only). ' +
        'Mint one with `pnpm --filter collab-api cli token --sub <sub>`.',
    );
  }
  const warehouse = await createWarehouse(config, { dataDir });
  const queryEngine = await createQueryEngine(config, {
    dataDir,
    exportBucket: config.STORAGE_BACKEND === 'gcs' ? config.GCS_BUCKET : undefined,
    limits: {
      maxResultRows: config.COLLAB_QUERY_MAX_RESULT_ROWS,
      maxConstantListElements: maxConstantListElements(config.COLLAB_MEMORY_BUDGET_MB),
    },
  });
  const agentIdSecret = config.COLLAB_AGENT_ID_SECRET ?? (await generatedAgentIdSecret(dataDir, base.logger));
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL) : undefined;
  const agents = createAgentClients({
    allowPrivate: config.COLLAB_AGENT_ALLOW_PRIVATE,
    timeoutSeconds: config.COLLAB_AGENT_TIMEOUT_SECONDS,
    cardTtlSeconds: config.COLLAB_AGENT_CARD_TTL_SECONDS,
    resolve: options.resolve,
  });
  const queue = createJobQueue({
    databaseUrl: base.databaseUrl ?? config.DATABASE_URL ?? '',
    embedded: !config.DATABASE_URL,
    logger: base.logger,
    pollSeconds: config.COLLAB_WORKER_POLL_SECONDS,
    heartbeatSeconds: config.COLLAB_JOB_HEARTBEAT_SECONDS,
    supervise: config.COLLAB_WORKER !== 'off',
  });
  const storage = createObjectStorage(config, { localRoot: path.join(dataDir, 'objects') });
  const uploadUrlSecret =
    config.COLLAB_UPLOAD_URL_SECRET ?? (await generatedUploadUrlSecret(dataDir, base.logger, storage.backend === 'local'));
  const notifier = createNotifier(config, { dataDir });
  const { databaseUrl: _, ...clients } = base;
  return {
    deps: {
      ...clients,
      config,
      tokens: createTokenVerifier(auth),
      warehouse,
      queryEngine,
      crashPoint: crashPoints(config.TEST_CRASH_POINT),
      agents,
      agentRequests: createAgentRequestLimit(redis),
      agentIdSecret,
      storage,
      queue,
      uploadUrlSecret,
      notifier,
      now: () => new Date(),
      queryJobEnds: new QueryJobEnds(),
    },
    close: async () => {
      // Jobs still running get no grace here: server.ts stops the worker first, with its grace.
      await queue.stop(0);
      await queryEngine.close();
      await warehouse.close();
      await agents.close();
      await notifier.close();
      await redis?.quit();
    },
  };
}

/** For development: a key kept in the data folder, so that the ids handed out outlive restarts. */
async function generatedAgentIdSecret(dataDir: string, logger: Logger): Promise<string> {
  const file = path.join(dataDir, 'agent-id-secret');
  logger.warn(
    { secretFile: file },
    'COLLAB_AGENT_ID_SECRET is not set: agent task ids are bound to tenants with a key generated in DATA_DIR; replicas on other data folders need COLLAB_AGENT_ID_SECRET',
  );
  return generatedSecret(file);
}

/** For development: a key kept in the data folder, so that upload links outlive restarts. */
async function generatedUploadUrlSecret(dataDir: string, logger: Logger, used: boolean): Promise<string> {
  const file = path.join(dataDir, 'upload-url-secret');
  if (used) {
    logger.warn(
      { secretFile: file },
      'COLLAB_UPLOAD_URL_SECRET is not set: upload links are signed with a key generated in DATA_DIR; replicas on other data folders need COLLAB_UPLOAD_URL_SECRET',
    );
  }
  return generatedSecret(file);
}

/** What the services that change the warehouse take (datasets, tables). */
export function changeDeps(deps: Deps): ChangeDeps {
  return {
    db: deps.db,
    warehouse: deps.warehouse,
    crashPoint: deps.crashPoint,
    leaseSeconds: deps.config.COLLAB_WAREHOUSE_LEASE_SECONDS,
  };
}
