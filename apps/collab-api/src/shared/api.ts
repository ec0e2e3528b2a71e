import type { RequestHandler } from 'express';
import type { Api } from '@repo/http';

/**
 * The same API with `authenticate` run first by every route declared through it: how every
 * /api/v1 route gets authentication, so that none can be declared without it. Each route also
 * documents 401.
 */
export function authenticatedApi(api: Api, authenticate: RequestHandler): Api {
  return {
    route(definition) {
      api.route({
        ...definition,
        middleware: [authenticate, ...(definition.middleware ?? [])],
        errors: [401, ...(definition.errors ?? [])],
      });
    },
  };
}
