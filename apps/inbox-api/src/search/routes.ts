import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import { searchPage, searchQuery } from './schemas.js';
import { search } from './service.js';

export function searchRoutes(api: InboxApi, deps: Deps): void {
  api.route({
    method: 'get',
    path: '/v1/search',
    tags: ['search'],
    summary: 'Search every inbox in reach, most relevant first',
    description:
      'Full-text search (Postgres ranking; subject words weigh more) over the subject, text body, sender and attachment ' +
      'filenames of the messages of every inbox the key reaches, or of `inbox_ids`; `q` also matches as a case-insensitive ' +
      'substring, for parts of words and addresses. Each item has a `score` and a `snippet`: HTML-escaped text whose only ' +
      'markup is `<mark>`…`</mark>` around the matches. Paged by `page_token` (or `offset`). Needs `read`.',
    query: searchQuery,
    response: searchPage,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'read'),
    handler: ({ actor, query }) => search(deps.db, scopeOf(actor), query),
  });
}
