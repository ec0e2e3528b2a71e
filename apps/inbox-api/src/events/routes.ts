import { z } from 'zod';
import { callerStands } from '../api-keys/directory.js';
import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { eventPage, listEventsQuery, streamEventsHeaders, streamEventsQuery } from './schemas.js';
import { checkCursor, eventFilters, eventsKeptSince, listEvents } from './service.js';
import { clientGone, streamEvents } from './stream.js';

export function eventRoutes(api: InboxApi, deps: Deps): void {
  api.route({
    method: 'get',
    path: '/v1/events',
    tags: ['events'],
    summary: 'List events after a cursor, waiting for one if asked',
    description:
      'Events in the scope of the key, oldest first, after `after`. With `wait`, when there are none yet, the answer comes as ' +
      'soon as a matching event commits (or empty after `wait` seconds). Pass `next_after` as the next `after`. A cursor of ' +
      'another scope answers 404; one older than the events kept (INBOX_EVENT_RETENTION_DAYS) answers 410. Needs `read`; a key ' +
      'revoked while the request waited is answered 401.',
    query: listEventsQuery,
    response: eventPage,
    errors: [404, 410],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: async ({ actor, query, res }) => {
      const scope = scopeOf(actor);
      const after = query.after ?? 0n;
      const keptSince = eventsKeptSince(deps.config.INBOX_EVENT_RETENTION_DAYS);
      await checkCursor(deps.db, scope, after, keptSince);
      const filters = await eventFilters(deps.db, scope, query, keptSince);
      return listEvents(deps, filters, {
        after,
        limit: query.limit,
        waitSeconds: query.wait,
        abort: clientGone(res),
        stands: callerStands(deps.apiKeys, actor),
      });
    },
  });
  api.route({
    method: 'get',
    path: '/v1/events/stream',
    tags: ['events'],
    summary: 'Stream events (Server-Sent Events)',
    description:
      'The events of GET /v1/events as Server-Sent Events: those after the cursor, then each as it commits. `id:` is the event id, ' +
      '`event:` its type, `data:` the event as JSON; `Last-Event-ID` (sent by EventSource on reconnection) resumes without gaps. ' +
      'A comment line every 15 seconds keeps proxies from closing a quiet stream. Needs `read`; once the key is revoked, the ' +
      'stream ends before it would send another event.',
    query: streamEventsQuery,
    headers: streamEventsHeaders,
    rawResponse: {
      description: 'A stream of events',
      content: { 'text/event-stream': z.string().meta({ example: 'id: 42\nevent: message.received\ndata: {"id":42,...}\n\n' }) },
    },
    errors: [404, 410],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: async ({ actor, query, headers, res }) => {
      const scope = scopeOf(actor);
      const after = headers['last-event-id'] ?? query.after ?? 0n;
      const keptSince = eventsKeptSince(deps.config.INBOX_EVENT_RETENTION_DAYS);
      await checkCursor(deps.db, scope, after, keptSince);
      const filters = await eventFilters(deps.db, scope, query, keptSince);
      await streamEvents(deps, filters, { after, res, stands: callerStands(deps.apiKeys, actor) });
      return undefined;
    },
  });
}
