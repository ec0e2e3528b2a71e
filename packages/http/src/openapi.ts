import { createRequire } from 'node:module';
import path from 'node:path';
import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import express, { type Router } from 'express';

export { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export function openApiDocument(
  registry: OpenAPIRegistry,
  info: { title: string; version: string; description?: string },
): OpenApiDocument {
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({ openapi: '3.1.0', info });
  rewritePatterns(document, ecmaPattern);
  return document;
}

const FLAGS_AT_END = /\/([dgimsuvy]+)$/;

/**
 * The ECMA-262 pattern of a regex as zod-to-openapi writes it. The library takes `regex.toString()`
 * without its first and last `/`, so a regex with flags keeps its closing delimiter and flags
 * (`^[^\p{Cc}]*$/u`), which no client can compile. The `u` flag is dropped: JSON Schema 2020-12
 * (OpenAPI 3.1) compiles every pattern with it. Any other flag (`i`, `s`, `m`...) changes what
 * the pattern means and has no place in the document: such a schema is refused here, so write its
 * regex without the flag (both cases spelled out, say).
 */
export function ecmaPattern(written: string): string {
  const end = FLAGS_AT_END.exec(written);
  // A `/` the source escapes is part of the pattern (`a\/u` matches "a/u"); an unescaped one ends it.
  if (!end || backslashesBefore(written, end.index) % 2 === 1) return written;
  if (end[1] !== 'u') {
    throw new Error(`The pattern ${written} has flags that a JSON Schema pattern cannot carry: only u (implied) is allowed`);
  }
  return written.slice(0, end.index);
}

function backslashesBefore(text: string, index: number): number {
  let count = 0;
  while (index - count > 0 && text[index - count - 1] === '\\') count++;
  return count;
}

// Objects whose keys are names (a property called `pattern` or `example`), not keywords.
const NAMED_SCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'schemas']);

/** Rewrites every schema's `pattern` in place; examples are values, not schemas, and are left alone. */
function rewritePatterns(node: unknown, rewrite: (pattern: string) => string, keysAreNames = false): void {
  if (Array.isArray(node)) {
    for (const item of node) rewritePatterns(item, rewrite);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(object)) {
    if (keysAreNames) rewritePatterns(value, rewrite);
    else if (key === 'pattern' && typeof value === 'string') object[key] = rewrite(value);
    else if (key !== 'example' && key !== 'examples') rewritePatterns(value, rewrite, NAMED_SCHEMAS.has(key));
  }
}

const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js'];

const DOCS_PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>API reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// A file of its own rather than an inline script, so the default Content-Security-Policy holds.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

/** `GET /openapi.json` and a browsable reference at `/docs`, served from swagger-ui-dist (no CDN). */
export function docsRouter(document: () => OpenApiDocument): Router {
  const router = express.Router();
  let cached: OpenApiDocument | undefined;
  router.get('/openapi.json', (_req, res) => {
    cached ??= document();
    res.json(cached);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(DOCS_INIT);
  });
  for (const asset of DOCS_ASSETS) {
    router.get(`/docs/${asset}`, (_req, res) => {
      // `root` keeps send's dotfile rule to the asset name (the absolute path passes through .pnpm).
      res.sendFile(asset, { root: swaggerUiDir, maxAge: '1d' });
    });
  }
  return router;
}
