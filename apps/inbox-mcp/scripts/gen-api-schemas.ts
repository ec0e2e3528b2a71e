/**
 * Writes src/api-schemas.ts from inbox-api's OpenAPI document: from the inbox-api at the URL given
 * (`pnpm gen:api-schemas http://127.0.0.1:8000`), or, without one, from inbox-api's source run on a
 * scratch database (Postgres as the tests use it), as the staleness test does. Then formats it.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { appRoot } from '../src/paths.js';
import { startInboxApi } from '../test/support/inbox-api.js';
import { apiSchemasSource, type OpenApiDocument } from './api-schemas-codegen.js';

export const API_SCHEMAS_FILE = path.join(appRoot, 'src', 'api-schemas.ts');

async function documentAt(url: string): Promise<OpenApiDocument> {
  const res = await fetch(`${url.replace(/\/+$/, '')}/openapi.json`);
  if (!res.ok) throw new Error(`GET ${url}/openapi.json: HTTP ${res.status}`);
  return (await res.json()) as OpenApiDocument;
}

const [url] = process.argv.slice(2);
let document: OpenApiDocument;
if (url) document = await documentAt(url);
else {
  const api = await startInboxApi('mcp_gen_api_schemas');
  try {
    document = await documentAt(api.url);
  } finally {
    await api.stop();
  }
}
await writeFile(API_SCHEMAS_FILE, apiSchemasSource(document));
await promisify(execFile)('pnpm', ['exec', 'prettier', '--write', API_SCHEMAS_FILE], { cwd: path.resolve(appRoot, '../..') });
process.stdout.write(`wrote ${path.relative(process.cwd(), API_SCHEMAS_FILE)}\n`);
