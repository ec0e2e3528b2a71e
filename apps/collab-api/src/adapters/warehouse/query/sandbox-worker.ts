/**
 * The sandbox's worker thread (see sandbox-thread.ts): one QuerySandbox, answering each request
 * with its result, or with its error's name and message. It imports nothing but @duckdb/node-api
 * and the sandbox's own modules, so it loads the same from TypeScript sources (through tsx) and
 * from dist/.
 */
import { parentPort } from 'node:worker_threads';
import { QuerySandbox } from './sandbox.js';
import type { SandboxRequest } from './sandbox-thread.js';

const port = parentPort!;
const opened = QuerySandbox.open();

port.on('message', (request: SandboxRequest) => {
  void (async () => {
    try {
      const sandbox = await opened;
      const result = request.method === 'check' ? await sandbox.check(...request.args) : await sandbox.locate(...request.args);
      port.postMessage({ id: request.id, result });
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      port.postMessage({ id: request.id, error: { name, message } });
    }
  })();
});
