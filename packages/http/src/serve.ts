import { once } from 'node:events';
import { type Server, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AppError, BadRequestError, type ErrorFormat } from '@repo/errors';
import type { Express } from 'express';
import type { Logger } from './logger.js';
import { DRAINING } from './service-app.js';

export interface RunningServer {
  server: Server;
  /** Base URL the server listens on, e.g. http://127.0.0.1:8000 */
  url: string;
  /** Stops accepting connections, lets in-flight requests finish (up to the timeout), then closes resources. */
  shutdown(reason: string): Promise<void>;
}

export interface ServeOptions {
  port: number;
  host: string;
  logger: Logger;
  shutdownTimeoutMs: number;
  /** Run in order once no request is in flight any more: close pools, stop the embedded database. */
  onClose?: (() => Promise<void>)[];
  /** Install SIGTERM/SIGINT handlers that shut down and exit (servers do; tests do not). */
  handleSignals?: boolean;
  /**
   * The service's error shape, for requests Node's HTTP parser refuses before the app sees them
   * (a URL past 16 KB: 431; a malformed request: 400). Without it, Node answers those with no body.
   */
  errorFormat?: ErrorFormat;
}

/** Answers a request the HTTP parser refused, in the service's error shape, and closes the connection. */
function answerClientError(format: ErrorFormat, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError(
          'request_header_too_large',
          'The request line and headers are over 16 KB: shorten the URL (long queries belong in fewer, shorter terms)',
        )
      : new BadRequestError('The request is not valid HTTP');
  const { status, body } = format(refusal);
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
}

export async function serve(app: Express, options: ServeOptions): Promise<RunningServer> {
  const server = app.listen(options.port, options.host);
  const { errorFormat } = options;
  if (errorFormat)
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(errorFormat, error, socket));
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  options.logger.info({ url }, 'listening');

  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string) => {
    stopping ??= (async () => {
      options.logger.info({ reason }, 'shutting down: finishing in-flight requests');
      app.locals[DRAINING] = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(() => {
        options.logger.warn(
          { timeoutMs: options.shutdownTimeoutMs },
          'requests still running at the shutdown timeout; closing their connections',
        );
        server.closeAllConnections();
      }, options.shutdownTimeoutMs);
      await closed;
      clearTimeout(force);
      for (const close of options.onClose ?? []) {
        await close().catch((error: unknown) => options.logger.error({ err: error }, 'error while closing a resource'));
      }
      options.logger.info('stopped');
    })();
    return stopping;
  };

  if (options.handleSignals) {
    // Every signal, not only the first: Ctrl-C reaches the whole process group, and pnpm and
    // turbo forward it once more; a second SIGINT left to Node's default would kill the process
    // mid-shutdown. Shutdown is bounded by its timeout instead.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        shutdown(signal).then(
          () => process.exit(0),
          () => process.exit(1),
        );
      });
    }
  }
  return { server, url, shutdown };
}
