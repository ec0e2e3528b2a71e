import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface LoadResult {
  requests: number;
  /** Every request sent, the warm-up's included (for costs measured over the whole run). */
  sent: number;
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Responses by status code. */
  statuses: Record<string, number>;
}

interface LoadOptions {
  /** Builds the i-th request. */
  request: (i: number) => { method: 'GET' | 'POST'; path: string; body?: unknown; headers?: Record<string, string> };
  connections: number;
  seconds: number;
  warmupSeconds?: number;
}

/**
 * A closed-loop load generator: `connections` keep-alive clients each send their next request
 * as soon as the previous one answered. Latencies of the warm-up are discarded; percentiles are
 * exact (every latency is kept).
 */
export async function runLoad(baseUrl: string, options: LoadOptions): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let counter = 0;
  const started = performance.now();
  const warmupEnds = started + (options.warmupSeconds ?? 2) * 1000;
  const ends = warmupEnds + options.seconds * 1000;

  const send = (i: number) =>
    new Promise<number>((resolve, reject) => {
      const { method, path, body, headers = {} } = options.request(i);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(`${baseUrl}${path}`, {
        method,
        agent,
        headers: {
          ...headers,
          ...(payload && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(payload);
    });

  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < ends) {
        const sentAt = performance.now();
        const status = await send(counter++);
        const answeredAt = performance.now();
        if (sentAt >= warmupEnds && answeredAt <= ends) {
          latencies.push(answeredAt - sentAt);
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    requests: latencies.length,
    sent: counter,
    perSecond: Math.round(latencies.length / options.seconds),
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: round(latencies.at(-1) ?? 0),
    statuses,
  };
}

const round = (ms: number) => Math.round(ms * 10) / 10;
