import express, { type Express } from 'express';
import { inboxErrorBody, inboxErrorFormat } from '@repo/errors';
import { createApi, createServiceApp, OpenAPIRegistry } from '@repo/http';
import { apiKeyRoutes } from './api-keys/routes.js';
import { carriesDownloadToken } from './attachments/download.js';
import { attachmentRoutes } from './attachments/routes.js';
import { actorOf, authenticate, limitRequests, operatorKeys } from './auth.js';
import type { Deps } from './deps.js';
import { draftRoutes } from './drafts/routes.js';
import { eventRoutes } from './events/routes.js';
import { inboxRoutes } from './inboxes/routes.js';
import { listRoutes } from './lists/routes.js';
import { messageRoutes } from './messages/routes.js';
import { organizationRoutes } from './organizations/routes.js';
import { searchRoutes } from './search/routes.js';
import { threadRoutes } from './threads/routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import { webhookOutRoutes } from './webhooks-out/routes.js';
import { MAX_BODY_CHARS } from './messages/schemas.js';

export function buildApp(deps: Deps): Express {
  const openapi = new OpenAPIRegistry();
  openapi.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An operator key (one of INBOX_API_KEYS: every organization) or an API key of an organization ' +
      '(`inbx_` followed by 36 letters and digits, from POST /v1/api-keys). Not required when the service runs without INBOX_API_KEYS.',
  });
  // Keys are checked before the body is read: a request without one never has its body parsed.
  const beforeBody = express.Router();
  beforeBody.use(
    '/v1',
    authenticate({
      operators: deps.config.INBOX_API_KEYS && operatorKeys(deps.config.INBOX_API_KEYS),
      keys: deps.apiKeys,
      failures: deps.limits.authFailures,
      exempt: carriesDownloadToken,
    }),
    limitRequests(deps.limits.requests, deps.config.INBOX_RATE_LIMIT_PER_MINUTE),
  );
  const router = express.Router();
  // Every /v1 handler gets the caller as `actor`, and documents 401 and 403.
  const api = createApi({
    router,
    openapi,
    errorBody: inboxErrorBody,
    security: [{ apiKey: [] }],
    context: (_req, res) => ({ actor: actorOf(res) }),
    contextErrors: [401, 403],
  });
  organizationRoutes(api, deps);
  apiKeyRoutes(api, deps);
  inboxRoutes(api, deps);
  threadRoutes(api, deps);
  messageRoutes(api, deps);
  attachmentRoutes(api, deps);
  eventRoutes(api, deps);
  listRoutes(api, deps);
  webhookOutRoutes(api, deps);
  searchRoutes(api, deps);
  draftRoutes(api, deps);
  // Providers authenticate their own way (webhooks/verify.ts), not with the API keys. Those that sign
  // the raw body (SendGrid's Event Webhook) read it themselves, before the JSON parser.
  const rawBodyRouter = express.Router();
  webhookRoutes(
    createApi({ router, openapi, errorBody: inboxErrorBody }),
    deps,
    createApi({ router: rawBodyRouter, openapi, errorBody: inboxErrorBody }),
  );

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
    beforeBody,
    routes: router,
    rawBodyRoutes: rawBodyRouter,
    jsonLimitBytes: jsonLimitBytes(deps.config.INBOX_MAX_ATTACHMENT_BYTES),
    // Bodies of other paths (404) are never read: that limit is tens of megabytes.
    jsonBodyPaths: ['/v1', '/webhooks'],
    trustProxyHops: deps.config.TRUST_PROXY_HOPS,
  });
}

/**
 * The largest JSON body a send may need: attachments of INBOX_MAX_ATTACHMENT_BYTES in base64 (4
 * bytes per 3), wrapped in lines of 64 as PEM and MIME write it (each `\r\n` 4 bytes of JSON), a
 * body of MAX_BODY_CHARS characters written as JSON escapes (6 bytes each at most), and 2 MiB for the
 * rest; a send within every documented limit is never refused for its size.
 */
export function jsonLimitBytes(maxAttachmentBytes: number): number {
  const base64 = Math.ceil((maxAttachmentBytes * 4) / 3);
  return Math.ceil((base64 * 68) / 64) + 6 * MAX_BODY_CHARS + 2 * 1024 * 1024;
}
