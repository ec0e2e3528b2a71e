/**
 * src/api-schemas.ts is generated from inbox-api's OpenAPI document (scripts/gen-api-schemas.ts):
 * this fails when the committed file is not what the API's current document generates, so the
 * shapes inbox-mcp parses and declares cannot drift from the API's.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import { apiSchemasSource, type OpenApiDocument } from '../scripts/api-schemas-codegen.js';
import { appRoot } from '../src/paths.js';
import { type InboxApi, startInboxApi } from './support/inbox-api.js';

jest.setTimeout(120_000);

const FILE = path.join(appRoot, 'src', 'api-schemas.ts');

/** Formatted as the generator leaves it (its CLI: prettier's API needs ESM loading that jest lacks). */
function formatted(source: string): string {
  const prettier = createRequire(import.meta.url).resolve('prettier/bin/prettier.cjs');
  return execFileSync(process.execPath, [prettier, '--stdin-filepath', FILE], { input: source, encoding: 'utf8' });
}

describe('src/api-schemas.ts', () => {
  let inboxApi: InboxApi;
  beforeAll(async () => {
    inboxApi = await startInboxApi('mcp_api_schemas');
  });
  afterAll(() => inboxApi?.stop());

  it("is what inbox-api's OpenAPI document generates (else run `pnpm --filter inbox-mcp gen:api-schemas`)", async () => {
    const document = (await (await fetch(`${inboxApi.url}/openapi.json`)).json()) as OpenApiDocument;
    const expected = formatted(apiSchemasSource(document));
    expect(await readFile(FILE, 'utf8')).toBe(expected);
  });
});

describe('the generator', () => {
  const doc = (schemas: Record<string, unknown>) => ({ components: { schemas } }) as OpenApiDocument;
  const only = (schema: unknown) =>
    doc({
      Error: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
      ...Object.fromEntries(
        [
          'Inbox',
          'InboxPage',
          'ThreadSummary',
          'ThreadPage',
          'Thread',
          'SendMessageResult',
          'Message',
          'MessageSearchItem',
          'MessagePage',
          'AttachmentListItem',
          'AttachmentPage',
          'Attachment',
          'Event',
          'EventPage',
          'SearchResult',
          'SearchPage',
          'Draft',
          'HeldSend',
        ].map((name) => [name, schema]),
      ),
    });

  it('writes nullable enums, optional fields, records, references and unions as zod', () => {
    const source = apiSchemasSource(
      only({
        type: 'object',
        properties: {
          status: { type: ['string', 'null'], enum: ['sent', null] },
          note: { type: 'string', description: 'A "quoted" note' },
          meta: { type: 'object', additionalProperties: {} },
          error: { $ref: '#/components/schemas/Error' },
          either: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] },
        },
        required: ['status', 'meta', 'error', 'either'],
      }),
    );
    expect(source).toContain(
      'export const inboxSchema = z.object({ status: z.enum(["sent"]).nullable(), note: z.string().describe("A \\"quoted\\" note").optional(), ' +
        'meta: z.record(z.string(), z.unknown()), error: errorSchema, either: z.union([z.number().int(), z.boolean()]) });',
    );
    // What a component refers to comes first; `Error` keeps its name off the global.
    expect(source.indexOf('export const errorSchema')).toBeLessThan(source.indexOf('export const inboxSchema'));
    expect(source).toContain('export type ErrorEnvelope = z.output<typeof errorSchema>;');
  });

  it('refuses what it does not understand, and a component the document lacks', () => {
    expect(() => apiSchemasSource(only({ type: 'object', properties: { a: { oneOf: [] } } }))).toThrow(
      'Inbox.a: unsupported JSON Schema keyword "oneOf"',
    );
    expect(() => apiSchemasSource(doc({}))).toThrow("inbox-api's OpenAPI document has no component Error");
  });

  it('exports zod schemas that refuse a message missing its fields', async () => {
    const { messageSchema } = await import('../src/api-schemas.js');
    expect(messageSchema).toBeInstanceOf(z.ZodObject);
    expect(messageSchema.safeParse({ id: 'x' }).success).toBe(false);
  });
});
