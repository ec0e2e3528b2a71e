import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { listThreadsQuery, threadPage, threadParams, threadSchema } from './schemas.js';
import { getThread, listThreads } from './service.js';

export function threadRoutes(api: InboxApi, deps: Deps): void {
  api.route({
    method: 'get',
    path: '/v1/threads',
    tags: ['threads'],
    summary: 'List the threads of an inbox, newest activity first',
    description:
      'A thread that gets new mail while you page moves to the front: a walk by `page_token` already past its old place does not list it (and never lists a thread twice). Start again from the first page, or follow `GET /v1/events`, to see threads that moved.',
    query: listThreadsQuery,
    response: threadPage,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, query }) => listThreads(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'get',
    path: '/v1/threads/{thread_id}',
    tags: ['threads'],
    summary: 'Get a thread as a conversation',
    description: 'Messages oldest first: inbound mail has role `user`, outbound `assistant`; content is clean Markdown.',
    params: threadParams,
    response: threadSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, params }) => getThread(deps.db, scopeOf(actor), params.thread_id),
  });
}
