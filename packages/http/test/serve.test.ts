import http from 'node:http';
import express from 'express';
import { pino } from 'pino';
import { inboxErrorFormat } from '@repo/errors';
import { createMetrics, createServiceApp, OpenAPIRegistry, serve } from '../src/index.js';

const logger = pino({ level: 'silent' });

function appWithSlowRoute(release: Promise<void>, onFinished: () => void = () => {}) {
  const routes = express.Router();
  routes.get('/slow', async (_req, res) => {
    await release;
    res.once('finish', onFinished);
    res.json({ done: true });
  });
  return createServiceApp({
    service: 'test-api',
    version: '0',
    logger,
    metrics: createMetrics({ service: 'test-api', collectDefault: false }),
    errorFormat: inboxErrorFormat,
    checkReadiness: async () => {},
    openapi: new OpenAPIRegistry(),
    routes,
  });
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('graceful shutdown', () => {
  it('finishes in-flight requests, refuses new connections, then closes resources', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const events: string[] = [];
    const running = await serve(
      appWithSlowRoute(released, () => events.push('in-flight request answered')),
      {
        port: 0,
        host: '127.0.0.1',
        logger,
        shutdownTimeoutMs: 10_000,
        onClose: [
          () => {
            events.push('database closed');
            return Promise.resolve();
          },
        ],
      },
    );

    const inFlight = get(`${running.url}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stopped = running.shutdown('test').then(() => events.push('stopped'));
    await new Promise((resolve) => setTimeout(resolve, 50));

    await expect(get(`${running.url}/health`)).rejects.toThrow(/ECONNREFUSED/);
    expect(events).toEqual([]);

    release();
    expect(await inFlight).toEqual({ status: 200, body: '{"done":true}' });
    await stopped;
    expect(events).toEqual(['in-flight request answered', 'database closed', 'stopped']);
  });

  it('cuts requests still running at the timeout so the process can exit', async () => {
    const never = new Promise<void>(() => {});
    const running = await serve(appWithSlowRoute(never), { port: 0, host: '127.0.0.1', logger, shutdownTimeoutMs: 100 });
    const inFlight = get(`${running.url}/slow`).catch((error: Error) => error.message);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await running.shutdown('test');
    expect(await inFlight).toMatch(/socket hang up|ECONNRESET/);
  });

  it('reports not ready while draining', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const app = appWithSlowRoute(released);
    const running = await serve(app, { port: 0, host: '127.0.0.1', logger, shutdownTimeoutMs: 10_000 });
    // A keep-alive connection opened before the shutdown may still send requests.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ready = (): Promise<number> =>
      new Promise((resolve, reject) => {
        http
          .get(`${running.url}/ready`, { agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      });
    expect(await ready()).toBe(200);
    const slow = get(`${running.url}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stopped = running.shutdown('test');
    expect(app.locals.draining).toBe(true);
    release();
    await slow;
    await stopped;
    agent.destroy();
  });
});
