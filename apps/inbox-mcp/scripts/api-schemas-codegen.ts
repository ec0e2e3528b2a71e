/**
 * src/api-schemas.ts from inbox-api's OpenAPI document: the component schemas inbox-mcp reads
 * (and every one they refer to) as zod schemas, so the shapes this server parses and declares as
 * tools' output schemas are the API's own. Pure: document in, TypeScript source out. A schema
 * construct this does not know stops it with an error rather than guessing.
 */

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: (string | null)[];
  const?: unknown;
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

export interface OpenApiDocument {
  components: { schemas: Record<string, JsonSchema> };
}

/** The components inbox-mcp parses responses with; what they refer to comes along. */
export const ROOT_COMPONENTS = [
  'Error',
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
];

const KNOWN_KEYS = new Set([
  '$ref',
  'type',
  'enum',
  'const',
  'format',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'example',
  'examples',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
]);

// `Error` would hide the global Error.
const typeName = (component: string) => (component === 'Error' ? 'ErrorEnvelope' : component);
const schemaName = (component: string) => `${component[0]!.toLowerCase()}${component.slice(1)}Schema`;
const refName = (ref: string) => {
  const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
  if (!match) throw new Error(`Unsupported $ref ${ref}`);
  return match[1]!;
};

function refsOf(schema: JsonSchema, into: Set<string>): Set<string> {
  if (schema.$ref) into.add(refName(schema.$ref));
  for (const child of [...Object.values(schema.properties ?? {}), schema.items, ...(schema.anyOf ?? [])]) {
    if (child) refsOf(child, into);
  }
  if (typeof schema.additionalProperties === 'object') refsOf(schema.additionalProperties, into);
  return into;
}

function zodOf(schema: JsonSchema, where: string): string {
  for (const key of Object.keys(schema)) {
    if (!KNOWN_KEYS.has(key)) throw new Error(`${where}: unsupported JSON Schema keyword "${key}"`);
  }
  const described = (code: string) => (schema.description ? `${code}.describe(${JSON.stringify(schema.description)})` : code);
  if (schema.$ref) return described(schemaName(refName(schema.$ref)));
  if (schema.anyOf)
    return described(`z.union([${schema.anyOf.map((item, i) => zodOf(item, `${where}.anyOf[${i}]`)).join(', ')}])`);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.includes('null');
  const [type, ...others] = types.filter((name) => name !== 'null');
  if (others.length > 0) throw new Error(`${where}: several non-null types`);
  let code: string;
  if (schema.const !== undefined) code = `z.literal(${JSON.stringify(schema.const)})`;
  else if (schema.enum) {
    const values = schema.enum.filter((value): value is string => value !== null);
    code = `z.enum(${JSON.stringify(values)})`;
  } else if (type === 'string') code = 'z.string()';
  else if (type === 'integer') code = 'z.number().int()';
  else if (type === 'number') code = 'z.number()';
  else if (type === 'boolean') code = 'z.boolean()';
  else if (type === 'array') {
    if (!schema.items) throw new Error(`${where}: array without items`);
    code = `z.array(${zodOf(schema.items, `${where}[]`)})`;
  } else if (type === 'object' || schema.properties) {
    if (schema.properties) {
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties).map(([name, property]) => {
        const value = zodOf(property, `${where}.${name}`);
        return `${/^[a-z_][a-z0-9_]*$/i.test(name) ? name : JSON.stringify(name)}: ${required.has(name) ? value : `${value}.optional()`}`;
      });
      code = `z.object({ ${fields.join(', ')} })`;
    } else {
      const values = typeof schema.additionalProperties === 'object' && Object.keys(schema.additionalProperties).length > 0;
      code = `z.record(z.string(), ${values ? zodOf(schema.additionalProperties as JsonSchema, `${where}{}`) : 'z.unknown()'})`;
    }
  } else throw new Error(`${where}: no type`);
  return described(nullable ? `${code}.nullable()` : code);
}

/** The source of src/api-schemas.ts. */
export function apiSchemasSource(document: OpenApiDocument): string {
  const { schemas } = document.components;
  const wanted = new Set<string>();
  const visit = (name: string) => {
    if (wanted.has(name)) return;
    const schema = schemas[name];
    if (!schema) throw new Error(`inbox-api's OpenAPI document has no component ${name}`);
    wanted.add(name);
    for (const ref of refsOf(schema, new Set())) visit(ref);
  };
  ROOT_COMPONENTS.forEach(visit);
  // Dependencies first, otherwise in the order of the document (stable output).
  const ordered: string[] = [];
  const place = (name: string, path: string[]) => {
    if (ordered.includes(name)) return;
    if (path.includes(name)) throw new Error(`Recursive schema ${[...path, name].join(' -> ')}`);
    for (const ref of [...refsOf(schemas[name]!, new Set())].sort()) place(ref, [...path, name]);
    ordered.push(name);
  };
  Object.keys(schemas)
    .filter((name) => wanted.has(name))
    .forEach((name) => place(name, []));
  const blocks = ordered.map((name) => {
    const schema = schemaName(name);
    return `export const ${schema} = ${zodOf(schemas[name]!, name)};\nexport type ${typeName(name)} = z.output<typeof ${schema}>;\n`;
  });
  return [
    '/**',
    " * inbox-api's response shapes as inbox-mcp parses them, GENERATED from inbox-api's OpenAPI document",
    ' * by `pnpm --filter inbox-mcp gen:api-schemas` (scripts/api-schemas-codegen.ts): do not edit.',
    ' * test/api-schemas.test.ts fails when this file no longer matches the API.',
    ' */',
    "import { z } from 'zod';",
    '',
    ...blocks,
  ].join('\n');
}
