import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OutboundMail } from '../../src/adapters/mail/index.js';

/** A port on 127.0.0.1 that nothing listens on. */
export { closedPort } from '@repo/testing';

/** Every byte value once: what a binary attachment must survive. */
export const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** A reply with every header and part a transport must carry, in more than ASCII. */
export function replyMail(overrides: Partial<OutboundMail> = {}): OutboundMail {
  return {
    from: '"Support Agent" <agent@inbox.example.com>',
    to: ['"Zoë Müller" <zoe@example.org>', 'bob@example.net'],
    cc: ['carol@example.com'],
    bcc: ['audit@example.com'],
    replyTo: ['replies@inbox.example.com'],
    subject: 'Re: Angebot für März ✓',
    text: 'Hello Zoë,\n\nthe offer is attached.',
    html: '<p>Hello Zoë,</p>\n<p>the offer is <strong>attached</strong>.</p>\n',
    messageId: '<msg-2@inbox.example.com>',
    inReplyTo: '<orig-1@example.org>',
    references: ['<root-0@example.org>', '<orig-1@example.org>'],
    attachments: [
      { filename: 'bytes.bin', contentType: 'application/octet-stream', content: ALL_BYTES },
      { filename: 'Übersicht März.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.7 test') },
    ],
    ...overrides,
  };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * An HTTP server on 127.0.0.1 standing in for a provider: `answer` decides each response
 * (after the test has checked what arrived), and every request is kept in `requests`.
 */
export async function startProvider(
  answer: (request: ReceivedRequest) => { status: number; body?: unknown; headers?: Record<string, string> },
) {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(request);
      const { status, body, headers = {} } = answer(request);
      res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
      res.end(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A server on 127.0.0.1 that accepts requests and never answers them. */
export async function startSilentServer() {
  const server = http.createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
