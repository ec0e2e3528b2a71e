import express, { type Express } from 'express';
import { inboxErrorBody, inboxErrorFormat } from '@repo/errors';
import { createApi, createServiceApp, OpenAPIRegistry } from '@repo/http';
import { limitRequests } from '@repo/rate-limit';
import { carriesDownloadToken } from './attachments/download.js';
import { attachmentRoutes } from './attachments/routes.js';
import { callerOf, configuredKeys, requireApiKey } from './auth.js';
import type { Deps } from './deps.js';
import { inboxRoutes } from './inboxes/routes.js';
import { messageRoutes } from './messages/routes.js';
import { threadRoutes } from './threads/routes.js';
import { webhookRoutes } from './webhooks/routes.js';

export function buildApp(deps: Deps): Express {
  const openapi = new OpenAPIRegistry();
  openapi.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'One of INBOX_API_KEYS; not required when the service runs without keys.',
  });
  const router = express.Router();
  router.use(
    '/v1',
    requireApiKey(deps.config.INBOX_API_KEYS && configuredKeys(deps.config.INBOX_API_KEYS), deps.limits.authFailures, {
      exempt: carriesDownloadToken,
    }),
    limitRequests(deps.limits.requests, callerOf),
  );
  const api = createApi({ router, openapi, errorBody: inboxErrorBody, security: [{ apiKey: [] }] });
  inboxRoutes(api, deps);
  threadRoutes(api, deps);
  messageRoutes(api, deps);
  attachmentRoutes(api, deps);
  // Providers authenticate their own way (webhooks/verify.ts), not with the API keys.
  webhookRoutes(createApi({ router, openapi, errorBody: inboxErrorBody }), deps);

  return createServiceApp({
    service: 'inbox-api',
    version: '1',
    description: 'E-mail inboxes for software agents.',
    logger: deps.logger,
    metrics: deps.metrics,
    errorFormat: inboxErrorFormat,
    checkReadiness: async () => {
      await deps.db.$queryRaw`SELECT 1`;
    },
    openapi,
    routes: router,
    // Attachments arrive base64-encoded (4 bytes per 3) inside the JSON body, next to the text.
    jsonLimitBytes: Math.ceil((deps.config.INBOX_MAX_ATTACHMENT_BYTES * 4) / 3) + 2 * 1024 * 1024,
    trustProxyHops: deps.config.TRUST_PROXY_HOPS,
  });
}
