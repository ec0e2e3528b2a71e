import express from 'express';
import { z } from 'zod';
import { inboxErrorBody } from '@repo/errors';
import { checkOpenApiDocument } from '@repo/testing';
import { ecmaPattern } from '../src/openapi.js';
import { createApi, openApiDocument, OpenAPIRegistry } from '../src/index.js';

describe('ecmaPattern', () => {
  it.each([
    ['^[^\\p{Cc}]*$/u', '^[^\\p{Cc}]*$'],
    ['^a\\//u', '^a\\/'],
    ['^[a-z/]+$/u', '^[a-z/]+$'],
    // No flags: the library wrote the source as it is.
    ['^\\d+$', '^\\d+$'],
    ['^a\\/u', '^a\\/u'],
    ['^a\\\\/u', '^a\\\\'],
    ['', ''],
  ])('makes %j %j', (written, pattern) => {
    expect(ecmaPattern(written)).toBe(pattern);
  });

  it.each(['^[a-z]+$/i', '^[a-z]+$/iu', '^a.b$/su', '^a$/m', '^a$/v', '^a$/g'])(
    'refuses %j: its flags change what it matches',
    (written) => {
      expect(() => ecmaPattern(written)).toThrow(/flags that a JSON Schema pattern cannot carry/);
    },
  );
});

function documentOf(schema: z.ZodType, options: { tags?: string[] } = { tags: ['things'] }) {
  const openapi = new OpenAPIRegistry();
  const api = createApi({ router: express.Router(), openapi, errorBody: inboxErrorBody, tags: options.tags });
  api.route({
    method: 'post',
    path: '/things',
    summary: 'Create a thing',
    body: z.object({ name: schema }),
    handler: () => ({}),
  });
  return openApiDocument(openapi, { title: 'test', version: '1' });
}

const bodySchema = (document: ReturnType<typeof documentOf>) =>
  (
    document.paths!['/things']!.post!.requestBody as {
      content: Record<string, { schema: { properties: Record<string, object> } }>;
    }
  ).content['application/json']!.schema.properties.name!;

describe('openApiDocument', () => {
  it('documents a regex with the u flag as its bare ECMA-262 source', () => {
    const document = documentOf(
      z
        .string()
        .regex(/^[^\p{Cc}]*$/u)
        .meta({ example: 'Support agent' }),
    );
    expect(bodySchema(document)).toMatchObject({ type: 'string', pattern: '^[^\\p{Cc}]*$', example: 'Support agent' });
    expect(checkOpenApiDocument(document as unknown as Record<string, unknown>)).toEqual({
      problems: [],
      patterns: 1,
      examples: 1,
    });
  });

  it('refuses a regex whose flags a pattern cannot carry', () => {
    expect(() => documentOf(z.string().regex(/^[a-z]+$/iu))).toThrow('The pattern ^[a-z]+$/iu has flags');
  });
});

describe('checkOpenApiDocument', () => {
  const check = (document: object) => checkOpenApiDocument(document as Record<string, unknown>).problems;
  const at = '#/paths/~1things/post/requestBody/content/application~1json/schema/properties/name';

  it('reports an example its schema refuses, formats included', () => {
    expect(check(documentOf(z.string().max(3).meta({ example: 'too long' })))).toEqual([
      `${at}/example: example "too long" is invalid: data must NOT have more than 3 characters`,
    ]);
    expect(check(documentOf(z.email().meta({ example: 'not an address' })))).toEqual([
      `${at}/example: example "not an address" is invalid: data must match format "email"`,
    ]);
    expect(check(documentOf(z.string().meta({ examples: ['fine', 7] })))).toEqual([
      `${at}/examples/1: example 7 is invalid: data must be string`,
    ]);
  });

  it('checks examples against schemas they reach by reference', () => {
    const named = z.object({ size: z.number().int().min(0) }).meta({ id: 'Named' });
    const document = documentOf(z.object({ item: named }).meta({ example: { item: { size: -1 } } }));
    expect(bodySchema(document)).toMatchObject({ properties: { item: { $ref: '#/components/schemas/Named' } } });
    expect(check(document)).toEqual([`${at}/example: example {"item":{"size":-1}} is invalid: data/item/size must be >= 0`]);
  });

  it('reports a pattern written with regex flags, and one that does not compile with the u flag', () => {
    const document = documentOf(z.string());
    Object.assign(bodySchema(document), { pattern: '^a$/u' });
    expect(check(document)).toEqual([`${at}/pattern: ends in regex flags: ^a$/u`]);
    Object.assign(bodySchema(document), { pattern: '^\\-[a]\\z$' });
    expect(check(document)).toEqual([expect.stringMatching(/^#.*\/name\/pattern: Invalid regular expression/)]);
  });

  it('reports parameter examples that fail, and operations without a tag', () => {
    expect(check(documentOf(z.string(), { tags: undefined }))).toEqual(['POST /things: the operation has no tag']);
    const document = {
      openapi: '3.1.0',
      paths: {
        '/things': {
          get: {
            tags: ['things'],
            parameters: [
              {
                name: 'limit',
                in: 'query',
                schema: { type: 'integer', maximum: 200 },
                examples: { fine: { value: 50 }, big: { value: 500 } },
              },
            ],
          },
        },
      },
    };
    expect(check(document)).toEqual([
      '#/paths/~1things/get/parameters/0/examples/big: example 500 is invalid: data must be <= 200',
    ]);
  });
});
