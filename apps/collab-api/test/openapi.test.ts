/**
 * The OpenAPI document describes every route the service answers: the routes Express has (walked
 * from the app's router, whichever way they were declared) and the document's operations are the
 * same, so a route declared outside createApi, or left out of the document, fails here. Routes
 * that are no API operation are left out by name, each for its reason. The operations that read or
 * write something other than JSON document it too.
 */
import request from 'supertest';
import { createTestContext, type TestContext } from './context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const NOT_OPERATIONS: Record<string, string> = {
  'GET /openapi.json': 'the document itself',
  'GET /docs': 'the browsable reference of the document, and its assets below',
  'GET /docs/init.js': 'an asset of /docs',
  'GET /docs/swagger-ui.css': 'an asset of /docs',
  'GET /docs/swagger-ui-bundle.js': 'an asset of /docs',
  'GET /console{/*file}': "the web console's pages and their files (src/console), for browsers",
};

/** What the walk reads of Express's router layers. */
interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  /** A router mounted at `/` (app.use(router)), whose routes' paths are whole. */
  slash?: boolean;
}

/** `METHOD /path` of every route of the stack and of the routers mounted in it, paths as OpenAPI writes them. */
function routesOf(stack: Layer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const path = layer.route.path.replace(/:(\w+)/g, '{$1}');
      return Object.keys(layer.route.methods).map((method) => `${method.toUpperCase()} ${path}`);
    }
    if (!layer.handle.stack) return [];
    if (!layer.slash) throw new Error('A router is mounted under a path: its routes need that path before them');
    return routesOf(layer.handle.stack);
  });
}

type Document = { paths: Record<string, Record<string, Operation>> };
interface Operation {
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
  security?: unknown[];
}
interface Schema {
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  $ref?: string;
}

async function openApiDocument(): Promise<Document> {
  const res = await request(ctx.app).get('/openapi.json');
  expect(res.status).toBe(200);
  return res.body as Document;
}

it('documents every route Express answers, and answers every documented operation', async () => {
  const { paths } = await openApiDocument();
  const documented = Object.entries(paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  const answered = routesOf((ctx.app as unknown as { router: { stack: Layer[] } }).router.stack);
  const operations = answered.filter((route) => !(route in NOT_OPERATIONS));
  expect(operations.filter((route) => !documented.includes(route))).toEqual([]);
  expect(documented.filter((route) => !operations.includes(route))).toEqual([]);
  // Each route left out exists: the list names nothing that is gone.
  expect(Object.keys(NOT_OPERATIONS).filter((route) => !answered.includes(route))).toEqual([]);
  // The walk reaches the app's own routes and those of the routers in it.
  expect(operations).toEqual(expect.arrayContaining(['GET /health', 'POST /api/v1/agents', 'PUT /load_job/{job_id}/file']));
});

it('documents POST /load_job/ as the multipart form it reads (the fields and the file), and its 422', async () => {
  const operation = (await openApiDocument()).paths['/load_job/']!.post!;
  const form = operation.requestBody?.content['multipart/form-data']?.schema;
  expect(Object.keys(form?.properties ?? {}).sort()).toEqual([
    'autodetect',
    'file',
    'source_format',
    'table_id',
    'write_disposition',
  ]);
  expect(form?.properties?.file).toMatchObject({ type: 'string', format: 'binary' });
  expect(form?.required).toEqual(['table_id']);
  expect(Object.keys(operation.requestBody?.content ?? {})).toEqual(['multipart/form-data', 'application/json']);
  expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['201', '404', '409', '413', '422']));
});

it.each([
  ['put', '/load_job/{job_id}/file', 'job_id'],
  ['get', '/api/v1/exports/{export_id}/file', 'export_id'],
])('documents %s %s: the id, the signed link’s expires and token, no bearer token, and the file', async (method, path, id) => {
  const operation = (await openApiDocument()).paths[path]![method]!;
  expect(operation.parameters?.map(({ name, in: where, required }) => ({ name, where, required }))).toEqual([
    { name: id, where: 'path', required: true },
    // Not required by the schema: a link without them is refused with 403, as a wrong one is.
    { name: 'expires', where: 'query', required: false },
    { name: 'token', where: 'query', required: false },
  ]);
  expect(operation.security).toBeUndefined();
  expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['403', '404', '422']));
  const file = { type: 'string', format: 'binary' };
  if (method === 'put') {
    expect(operation.requestBody).toEqual({ required: true, content: { 'application/octet-stream': { schema: file } } });
  } else {
    const types = operation.responses['200']?.content ?? {};
    expect(Object.keys(types).sort()).toEqual([
      'application/avro',
      'application/gzip',
      'application/vnd.apache.parquet',
      'application/x-ndjson',
      'application/zlib',
      'text/csv',
    ]);
    for (const type of Object.values(types)) expect(type.schema).toEqual(file);
  }
});
