import express, { type Express } from 'express';
import { collabErrorFormat } from '@repo/errors';
import { createServiceApp, type Logger, type Metrics, OpenAPIRegistry } from '@repo/http';
import type { Config } from './config.js';
import type { Database } from './database.js';

/** Everything the app talks to, built by server.ts (or by a test) and passed in. */
export interface Deps {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: Metrics;
}

export function buildApp(deps: Deps): Express {
  const openapi = new OpenAPIRegistry();
  const routes = express.Router();
  return createServiceApp({
    service: 'collab-api',
    version: '1',
    description: 'Multi-tenant data collaboration: projects, datasets, tables, queries, sharing and agents.',
    logger: deps.logger,
    metrics: deps.metrics,
    errorFormat: collabErrorFormat,
    checkReadiness: async () => {
      await deps.db.$queryRaw`SELECT 1`;
    },
    openapi,
    routes,
    trustProxyHops: deps.config.TRUST_PROXY_HOPS,
  });
}
