import express, { type Express } from 'express';
import { collabErrorBody, collabErrorFormat } from '@repo/errors';
import { createApi, createServiceApp, type Logger, type Metrics, OpenAPIRegistry } from '@repo/http';
import { authenticateCaller } from './access/index.js';
import type { Warehouse } from './adapters/warehouse/index.js';
import type { TokenVerifier } from './auth/index.js';
import type { Config } from './config.js';
import type { Database } from './database.js';
import { datasetRoutes } from './datasets/routes.js';
import { projectRoutes } from './projects/routes.js';
import { authenticatedApi } from './shared/api.js';
import { tableJobRoutes } from './table-jobs/routes.js';
import { tableRoutes } from './tables/routes.js';
import { tenantRoutes } from './tenants/routes.js';
import { userRoutes } from './users/routes.js';

/** Everything the app talks to, built by deps.ts (for server.ts and tests) and passed in. */
export interface Deps {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: Metrics;
  /** Verifies the bearer tokens of /api/v1 requests. */
  tokens: TokenVerifier;
  /** Mirrors datasets and tables. */
  warehouse: Warehouse;
}

export function buildApp(deps: Deps): Express {
  const openapi = new OpenAPIRegistry();
  openapi.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      "A JWT whose `sub` is a user's identity_provider_id (or, for tenant operations, with the platform-operator claim).",
  });
  const router = express.Router();
  const api = authenticatedApi(
    createApi({ router, openapi, errorBody: collabErrorBody, validationStatus: 422, security: [{ bearerAuth: [] }] }),
    authenticateCaller(deps.tokens, deps.db),
  );
  tenantRoutes(api, deps);
  userRoutes(api, deps);
  projectRoutes(api, deps);
  datasetRoutes(api, deps);
  tableRoutes(api, deps);
  tableJobRoutes(api, deps, 'import');
  tableJobRoutes(api, deps, 'export');

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
    routes: router,
    trustProxyHops: deps.config.TRUST_PROXY_HOPS,
  });
}
