import { parentPort } from 'node:worker_threads';
import { type ContentTask, runTask } from './message.js';

/*
 * A content worker (see pool.ts): runs one task at a time and answers with its result (the
 * buffers of a parsed mail's attachments handed over, not copied), or with the error's message
 * when the task failed. It imports nothing but npm packages, this folder and the parser of raw
 * mail (src/webhooks/mime.ts), so it loads the same from TypeScript sources (through tsx) and from dist/.
 */

const port = parentPort!;
port.on('message', ({ task }: { task: ContentTask }) => {
  runTask(task).then(
    ({ result, transfer }) => port.postMessage({ result }, transfer),
    (error: unknown) => port.postMessage({ error: error instanceof Error ? error.message : String(error) }),
  );
});
// Modules are loaded: tasks may come, and their time limit starts with them.
port.postMessage('ready');
