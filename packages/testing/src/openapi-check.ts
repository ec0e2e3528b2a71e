import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

// A CommonJS module whose function is also its `default`: the one name that TypeScript, Node's ESM
// and jest's CommonJS all see.
const addFormats = ajvFormats.default;

export interface OpenApiCheck {
  /** What keeps a client that validates with the document from working, one line each; empty when nothing does. */
  problems: string[];
  /** How many patterns and examples were checked. */
  patterns: number;
  examples: number;
}

type Json = Record<string, unknown>;

// Where components live once their references are made absolute (a schema checked alone still reaches them).
const BASE = 'https://openapi.document.invalid/';

/**
 * Checks an OpenAPI 3.1 document as a client that validates with it would use it: every `pattern`
 * compiles as an ECMA-262 regex with the `u` flag (the dialect of JSON Schema 2020-12), every
 * documented example (`example`, `examples` of schemas, parameters and media types) is valid
 * against its own schema (with a JSON Schema 2020-12 validator, formats included), and every
 * operation is grouped under a tag.
 */
export function checkOpenApiDocument(document: Json): OpenApiCheck {
  const problems: string[] = [];
  let patterns = 0;
  let examples = 0;
  const absolute = withAbsoluteRefs(document) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  const schemas = ((absolute.components as Json | undefined)?.schemas ?? {}) as Json;
  for (const [name, schema] of Object.entries(schemas)) ajv.addSchema(schema as Json, `${BASE}components/schemas/${name}`);

  const checkExample = (schema: unknown, value: unknown, at: string) => {
    examples++;
    try {
      const validate = ajv.compile(schema as Json);
      if (!validate(value))
        problems.push(`${at}: example ${JSON.stringify(value)} is invalid: ${ajv.errorsText(validate.errors)}`);
    } catch (error) {
      problems.push(`${at}: schema does not compile: ${(error as Error).message}`);
    }
  };

  walk(absolute, '#', false, (node, at) => {
    if (typeof node.pattern === 'string') {
      patterns++;
      // A regex written with its delimiter and flags (`^a$/u`) compiles, and matches nothing it should.
      if (/(?<!\\)\/[dgimsuvy]+$/.test(node.pattern)) problems.push(`${at}/pattern: ends in regex flags: ${node.pattern}`);
      try {
        new RegExp(node.pattern, 'u');
      } catch (error) {
        problems.push(`${at}/pattern: ${(error as Error).message}`);
      }
    }
    // A parameter or media type documents examples of its `schema`; a schema, of itself.
    const schema = 'schema' in node ? node.schema : withoutExamples(node);
    if ('example' in node) checkExample(schema, node.example, `${at}/example`);
    if (Array.isArray(node.examples)) node.examples.forEach((value, i) => checkExample(schema, value, `${at}/examples/${i}`));
    else if (typeof node.examples === 'object' && node.examples !== null) {
      for (const [name, example] of Object.entries(node.examples as Json)) {
        if (typeof example === 'object' && example !== null && 'value' in example) {
          checkExample(schema, (example as Json).value, `${at}/examples/${name}`);
        }
      }
    }
  });

  for (const [path, operations] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const tags = (operation as Json).tags;
      if (!Array.isArray(tags) || tags.length === 0) problems.push(`${method.toUpperCase()} ${path}: the operation has no tag`);
    }
  }
  return { problems, patterns, examples };
}

// Objects whose keys are names (a property called `pattern` or `example`), not keywords.
const NAMED = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'schemas',
  'paths',
  'responses',
  'content',
  'parameters',
  'headers',
]);

/** Visits every object that can hold keywords, skipping example values (data, not schemas). */
function walk(node: unknown, at: string, keysAreNames: boolean, visit: (node: Json, at: string) => void): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => walk(item, `${at}/${i}`, false, visit));
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  if (!keysAreNames) visit(node as Json, at);
  for (const [key, value] of Object.entries(node)) {
    if (!keysAreNames && (key === 'example' || key === 'examples')) continue;
    walk(value, `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, !keysAreNames && NAMED.has(key), visit);
  }
}

function withoutExamples(schema: Json): Json {
  const { example: _example, examples: _examples, ...rest } = schema;
  return rest;
}

/** A copy whose `#/components/...` references name the components under BASE. */
function withAbsoluteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withAbsoluteRefs);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/')
        ? `${BASE}${value.slice(2)}`
        : withAbsoluteRefs(value),
    ]),
  );
}
