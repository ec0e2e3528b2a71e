import http from 'node:http';
import net from 'node:net';
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

describe('requests the HTTP parser refuses', () => {
  /** Sends `request` over a socket of its own; the whole answer, once the server closes it. */
  async function raw(url: string, request: string): Promise<string> {
    const { hostname, port } = new URL(url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.write(request);
    await new Promise((resolve) => socket.on('close', resolve));
    return answer;
  }

  it("answers a URL past 16 KB with 431 and a malformed request with 400, in the service's error shape", async () => {
    const running = await serve(appWithSlowRoute(Promise.resolve()), {
      port: 0,
      host: '127.0.0.1',
      logger,
      shutdownTimeoutMs: 100,
      errorFormat: inboxErrorFormat,
    });
    try {
      const long = await raw(running.url, `GET /v1/search?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(long).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      expect(JSON.parse(long.slice(long.indexOf('\r\n\r\n') + 4))).toEqual({
        error: { code: 'request_header_too_large', message: expect.stringContaining('16 KB'), details: {} },
      });
      const malformed = await raw(running.url, 'NOT HTTP AT ALL\r\n\r\n');
      expect(malformed).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4)).error.code).toBe('bad_request');
      // The server goes on answering.
      expect((await get(`${running.url}/slow`)).status).toBe(200);
    } finally {
      await running.shutdown('test');
    }
  });
});
