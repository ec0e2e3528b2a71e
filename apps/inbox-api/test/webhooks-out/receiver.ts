import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver on 127.0.0.1 that behaves as its path says: `/ok` answers 204, `/fail` 500,
 * `/hang` never answers, `/redirect` 302 to `/ok`, `/close` drops the connection; `/flaky` fails
 * while `flaky.failing` is set. Every request is recorded in `received`.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const flaky = { failing: true };
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!.replace(/^\/[^/]+/, (first) => first);
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const wake of waiters.splice(0)) wake();
      const kind = path.split('/')[1];
      if (kind === 'ok') res.writeHead(204).end();
      else if (kind === 'fail') res.writeHead(500, { 'content-type': 'text/plain' }).end('broken');
      else if (kind === 'redirect') res.writeHead(302, { location: '/ok/redirected' }).end();
      else if (kind === 'close') req.socket.destroy();
      else if (kind === 'flaky') res.writeHead(flaky.failing ? 503 : 200).end();
      else if (kind === 'hang') {
        /* never answers */
      } else res.writeHead(404).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    flaky,
    /** The requests to `path` once there are at least `count` of them (or throws after `timeoutMs`). */
    async waitFor(path: string, count = 1, timeoutMs = 20_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = received.filter((request) => request.path === path);
        if (matching.length >= count) return matching;
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`${path}: ${matching.length} of ${count} requests after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(remaining, 500));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
