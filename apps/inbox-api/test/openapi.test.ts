import request from 'supertest';
import { checkOpenApiDocument } from '@repo/testing';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
let document: { paths: Record<string, Record<string, { tags?: string[] }>> };
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
      /^\/v1\/(\w+)/.exec(path)?.[1] ?? (path.startsWith('/webhooks/') ? 'webhooks' : 'operations');
    expect(tags).toEqual(tags.map(({ path, method }) => ({ path, method, tags: [resource(path)] })));
    expect(new Set(tags.map((operation) => operation.tags?.[0]))).toEqual(
      new Set(['inboxes', 'threads', 'messages', 'attachments', 'webhooks', 'operations']),
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
});
