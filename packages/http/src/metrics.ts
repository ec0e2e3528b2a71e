import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { routeOf } from './logger.js';

export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
}

/** A registry of its own per app instance (no prom-client globals), with Node's default metrics. */
export function createMetrics(options: { service: string; collectDefault?: boolean }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  if (options.collectDefault !== false) collectDefaultMetrics({ register: registry });
  const httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { registry, httpRequestDuration };
}

export function metricsMiddleware(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpRequestDuration.startTimer();
    res.once('finish', () => stop({ method: req.method, route: routeOf(req), status_code: String(res.statusCode) }));
    next();
  };
}
