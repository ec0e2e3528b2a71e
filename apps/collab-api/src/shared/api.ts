import type { Router } from 'express';
import { collabErrorBody } from '@repo/errors';
import { type Api, createApi, type OpenAPIRegistry } from '@repo/http';
import { type Actor, type Caller, requireActor } from '../access/index.js';
import type { Authenticate } from '../auth/index.js';

/** Routes for the users of a tenant: handlers get the signed-in `actor` (a platform operator who is no user: 401). */
export type UserApi = Api<{ actor: Actor }>;

/** Routes open to platform operators too (tenants): handlers get the `caller`. */
export type CallerApi = Api<{ caller: Caller }>;

/**
 * Routes that take no user token and check a credential of their own: an operator's approval expiry
 * (the internal token), the signed upload and download links of local storage (their signature).
 */
export type InternalApi = Api;

/**
 * The ways /api/v1 routes are declared. Users' and callers' routes authenticate first, so that
 * none can be declared without it, and document 401 on every route; internal routes take no user
 * token and check their own. Invalid input is FastAPI's 422.
 */
export function collabApis(options: { router: Router; openapi: OpenAPIRegistry; authenticate: Authenticate }): {
  users: UserApi;
  callers: CallerApi;
  internal: InternalApi;
} {
  const { router, openapi, authenticate } = options;
  const base = {
    router,
    openapi,
    errorBody: collabErrorBody,
    validationStatus: 422 as const,
    security: [{ bearerAuth: [] }],
    contextErrors: [401],
  };
  return {
    users: createApi({ ...base, context: async (req, res) => ({ actor: requireActor(await authenticate(req, res)) }) }),
    callers: createApi({ ...base, context: async (req, res) => ({ caller: await authenticate(req, res) }) }),
    internal: createApi({ router, openapi, errorBody: collabErrorBody, validationStatus: 422 }),
  };
}
