import express, { type Express } from 'express';
import { collabErrorFormat } from '@repo/errors';
import { createServiceApp, OpenAPIRegistry } from '@repo/http';
import { accessLogRoutes } from './access-log/routes.js';
import { agentRoutes } from './agents/routes.js';
import { approvalRoutes } from './approvals/routes.js';
import { associationRoutes } from './associations/routes.js';
import { authenticateCaller } from './auth/index.js';
import { consoleRoutes } from './console/routes.js';
import { datasetRoutes } from './datasets/routes.js';
import type { Deps } from './deps.js';
import { exportRoutes } from './exports/routes.js';
import { loadJobRoutes } from './load-jobs/routes.js';
import { projectAgentRoutes } from './project-agents/routes.js';
import { projectRoutes } from './projects/routes.js';
import { queryRoutes } from './queries/routes.js';
import { queryJobRoutes } from './query-jobs/routes.js';
import { quotaRoutes } from './quota/routes.js';
import { collabApis } from './shared/api.js';
import { tableJobRoutes } from './table-jobs/routes.js';
import { tableRoutes } from './tables/routes.js';
import { tenantRoutes } from './tenants/routes.js';
import { userRoutes } from './users/routes.js';

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
  const apis = collabApis({ router, openapi, authenticate: authenticateCaller(deps.tokens, deps.db) });
  tenantRoutes(apis.callers, deps);
  userRoutes(apis.users, deps);
  projectRoutes(apis.users, deps);
  datasetRoutes(apis.users, deps);
  accessLogRoutes(apis.users, deps);
  tableRoutes(apis.users, deps);
  tableJobRoutes(apis.users, deps);
  agentRoutes(apis.users, deps);
  projectAgentRoutes(apis.users, deps);
  approvalRoutes(apis.users, apis.internal, deps);
  associationRoutes(apis.users, deps);
  queryRoutes(apis.users, deps);
  queryJobRoutes(apis.users, deps);
  exportRoutes(apis.users, apis.internal, deps);
  quotaRoutes(apis, deps);
  loadJobRoutes(apis.users, apis.internal, deps);
  consoleRoutes(router);

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
