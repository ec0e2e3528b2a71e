export { createLogger, requestLogger, routeOf, type Logger } from './logger.js';
export { createMetrics, metricsMiddleware, type Metrics } from './metrics.js';
export { docsRouter, openApiDocument, OpenAPIRegistry, type OpenApiDocument } from './openapi.js';
export { serve, type RunningServer, type ServeOptions } from './serve.js';
export { createServiceApp, DRAINING, type ServiceAppOptions } from './service-app.js';
export { paginationQuery, queryInteger } from './pagination.js';
export { createApi, expressPath, type Api, type ApiOptions, type RouteDefinition, type RouteInput } from './routes.js';
export { MAX_INPUT_NESTING, MAX_JSON_CONTAINERS, nestsDeeperThan } from './well-formed.js';
