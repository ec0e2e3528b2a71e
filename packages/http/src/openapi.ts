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
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({ openapi: '3.1.0', info });
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
