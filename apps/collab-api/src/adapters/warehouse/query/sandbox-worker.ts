/**
 * The sandbox's worker thread (see sandbox-thread.ts): one QuerySandbox, answering each request
 * with its result, or with its error's name, message and (a QueryFailure's) reason. It imports nothing but @duckdb/node-api
 * and the sandbox's own modules, so it loads the same from TypeScript sources (through tsx) and
 * from dist/.
 */
import { parentPort } from 'node:worker_threads';
import { QueryFailure } from './interface.js';
import { QuerySandbox } from './sandbox.js';
import type { SandboxError, SandboxRequest } from './sandbox-thread.js';

const port = parentPort!;
const opened = QuerySandbox.open();
// Ready for checks: openSandboxThread waits for this (and a failure to open ends the thread).
void opened.then(() => port.postMessage('ready'));

port.on('message', (request: SandboxRequest) => {
  void (async () => {
    try {
      const sandbox = await opened;
      const result =
        request.method === 'check'
          ? await sandbox.check(...request.args)
          : request.method === 'locate'
            ? await sandbox.locate(...request.args)
            : await sandbox.namedTables(...request.args);
      port.postMessage({ id: request.id, result });
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      const reply: SandboxError = { name, message, reason: error instanceof QueryFailure ? error.reason : undefined };
      port.postMessage({ id: request.id, error: reply });
    }
  })();
});
