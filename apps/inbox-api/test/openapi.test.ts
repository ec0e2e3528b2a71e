import request from 'supertest';
import { checkOpenApiDocument } from '@repo/testing';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
interface SchemaObject {
  required?: string[];
  properties?: Record<string, unknown>;
}
let document: {
  paths: Record<string, Record<string, { tags?: string[]; security?: unknown[]; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, SchemaObject>; securitySchemes: Record<string, { scheme?: string }> };
};
beforeAll(async () => {
  ctx = await createTestContext();
  document = (await request(ctx.app).get('/openapi.json').expect(200)).body;
});
afterAll(() => ctx.close());

describe('/openapi.json', () => {
  it('groups every operation under its resource', () => {
    const tags = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({ path, method, tags: operation.tags })),
    );
    const resource = (path: string) =>
      /^\/v1\/([\w-]+)/.exec(path)?.[1] ?? (path.startsWith('/webhooks/') ? 'webhooks' : 'operations');
    expect(tags).toEqual(tags.map(({ path, method }) => ({ path, method, tags: [resource(path)] })));
    expect(new Set(tags.map((operation) => operation.tags?.[0]))).toEqual(
      new Set([
        'organizations',
        'api-keys',
        'inboxes',
        'threads',
        'messages',
        'attachments',
        'events',
        'lists',
        'search',
        'drafts',
        'webhooks',
        'operations',
      ]),
    );
  });

  it('has patterns that any JSON Schema validator compiles: no regex flags in them', () => {
    const check = checkOpenApiDocument(document);
    expect(check.problems).toEqual([]);
    // Names, subjects, addresses, file names and content types carry one each.
    expect(check.patterns).toBeGreaterThanOrEqual(6);
    const patterns: string[] = [];
    JSON.stringify(document, (key, value: unknown) => {
      if (key === 'pattern' && typeof value === 'string') patterns.push(value);
      return value;
    });
    expect(patterns.filter((pattern) => /\/[a-z]+$/.test(pattern))).toEqual([]);
    expect(patterns).toContain('^[^\\p{Cc}]*$');
  });

  it('documents conversations: reply, forward, labels, filters, cursors and search', () => {
    const { schemas } = document.components;
    for (const name of ['MessagePage', 'ThreadPage', 'InboxPage', 'SearchPage']) {
      expect(schemas[name]?.required).toEqual(expect.arrayContaining(['items', 'count', 'total', 'next_page_token']));
    }
    expect(schemas.ThreadSummary?.required).toEqual(expect.arrayContaining(['labels', 'message_count', 'participants']));
    expect(schemas.SearchResult?.required).toEqual(expect.arrayContaining(['score', 'snippet']));
    const parameters = (path: string) =>
      ((document.paths[path]!.get as unknown as { parameters: { name: string }[] }).parameters ?? []).map((p) => p.name);
    expect(parameters('/v1/messages')).toEqual(
      expect.arrayContaining(['labels', 'direction', 'from', 'after', 'before', 'has_attachments', 'page_token', 'offset']),
    );
    expect(parameters('/v1/search')).toEqual(
      expect.arrayContaining(['q', 'inbox_ids', 'labels', 'after', 'before', 'page_token']),
    );
    expect(Object.keys(document.paths['/v1/messages/{message_id}']!)).toEqual(expect.arrayContaining(['get', 'patch']));
    expect(document.paths['/v1/messages/{message_id}/reply']!.post!.responses).toHaveProperty('201');
    expect(document.paths['/v1/messages/{message_id}/forward']!.post!.responses).toHaveProperty('413');
  });

  it('documents the event routes: a page with its cursor, a stream, and 410 for a cursor no longer kept', () => {
    const { schemas } = document.components;
    expect(schemas.EventPage?.required).toEqual(['items', 'next_after']);
    expect(schemas.Event?.required).toEqual(
      expect.arrayContaining(['id', 'type', 'created_at', 'organization_id', 'inbox_id', 'thread_id', 'message_id', 'data']),
    );
    const list = document.paths['/v1/events']!.get!;
    const stream = document.paths['/v1/events/stream']!.get! as { responses: Record<string, { content?: object }> };
    expect(Object.keys(list.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '410']));
    expect(Object.keys(stream.responses['200']!.content ?? {})).toEqual(['text/event-stream']);
  });

  it('documents webhooks: the secret only on create, deliveries with their attempts, and the retry', () => {
    const { schemas } = document.components;
    expect(schemas.CreatedWebhook?.required).toEqual(
      expect.arrayContaining(['id', 'url', 'event_types', 'inbox_ids', 'enabled', 'secret', 'created_at']),
    );
    expect(schemas.Webhook?.properties).not.toHaveProperty('secret');
    expect(schemas.WebhookDelivery?.required).toEqual(
      expect.arrayContaining(['id', 'status', 'attempts', 'last_status_code', 'next_attempt_at', 'attempt_log']),
    );
    const paths = document.paths;
    expect(Object.keys(paths['/v1/webhooks']!)).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(paths['/v1/webhooks/{webhook_id}']!)).toEqual(expect.arrayContaining(['get', 'patch', 'delete']));
    expect(Object.keys(paths['/v1/webhooks/{webhook_id}/deliveries']!)).toEqual(['get']);
    const retry = paths['/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry']!.post!;
    expect(Object.keys(retry.responses)).toEqual(expect.arrayContaining(['202', '404']));
    expect(Object.keys(paths['/v1/webhooks']!.post!.responses)).toEqual(expect.arrayContaining(['201', '400', '403']));
  });

  it('documents organizations, API keys, and the organization of an inbox', () => {
    const { schemas } = document.components;
    expect(schemas.Inbox?.required).toContain('organization_id');
    expect(Object.keys(schemas.Organization?.properties ?? {})).toEqual(['id', 'name', 'sending_enabled', 'created_at']);
    expect(schemas.ApiKey?.properties).not.toHaveProperty('key');
    expect(schemas.ApiKey?.required).toEqual(expect.arrayContaining(['prefix', 'last_used_at', 'permissions', 'inbox_ids']));
    expect(schemas.CreatedApiKey?.required).toContain('key');
    expect(document.components.securitySchemes.apiKey?.scheme).toBe('bearer');
    // Every /v1 operation names the key and answers 401 and 403.
    for (const [path, operations] of Object.entries(document.paths).filter(([path]) => path.startsWith('/v1/'))) {
      for (const [method, operation] of Object.entries(operations)) {
        expect({ operation: `${method} ${path}`, security: operation.security }).toEqual({
          operation: `${method} ${path}`,
          security: [{ apiKey: [] }],
        });
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '403']));
      }
    }
  });
});
