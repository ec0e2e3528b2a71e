/**
 * A pass-through HTTP proxy on 127.0.0.1 in front of the real inbox-api, noting the Authorization
 * header of every request it forwards: inbox-api logs no credential, and the tests need to see
 * which key reached it. It changes nothing in either direction.
 */
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForwardedRequest {
  method: string;
  url: string;
  authorization: string | undefined;
}

export interface RecordingProxy {
  url: string;
  forwarded: ForwardedRequest[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const forwarded: ForwardedRequest[] = [];
  const server = createServer((req, res) => {
    forwarded.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    const outgoing = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    outgoing.on('error', () => res.destroy());
    req.pipe(outgoing);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
