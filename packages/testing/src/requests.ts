import { once } from 'node:events';
import net from 'node:net';

/**
 * The status line a server answers (or '' when none comes within `waitMs`) to a POST of `path` that
 * declares a 40 MB JSON body and sends only its first bytes: a server that decides before reading
 * the body (a missing key, a path that takes none) answers at once; one that reads it first does not.
 */
export async function statusLineBeforeBody(
  port: number,
  path: string,
  options: { headers?: Record<string, string>; waitMs?: number } = {},
): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  const headers = Object.entries({
    Host: '127.0.0.1',
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...options.headers,
    'Content-Length': '40000000',
  }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`POST ${path} HTTP/1.1\r\n${headers.join('')}\r\n[{},{},`);
  await new Promise((resolve) => setTimeout(resolve, options.waitMs ?? 500));
  socket.destroy();
  return answer.split('\r\n')[0]!;
}
