import { parentPort } from 'node:worker_threads';
import { type ContentTask, runTask } from './message.js';

/*
 * A content worker (see pool.ts): runs one task at a time and answers with its result, or with
 * the error's message when the task threw. It imports nothing but npm packages and this folder,
 * so it loads the same from TypeScript sources (through tsx) and from dist/.
 */

const port = parentPort!;
port.on('message', ({ task }: { task: ContentTask }) => {
  try {
    port.postMessage({ result: runTask(task) });
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
// Modules are loaded: tasks may come, and their time limit starts with them.
port.postMessage('ready');
