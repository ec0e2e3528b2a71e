import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { type ContentTask, runTask } from './message.js';

/*
 * A content worker (see pool.ts): runs one task at a time and answers with its result (the
 * buffers of a parsed mail's attachments handed over, not copied), or with the error's message
 * when the task failed. It imports nothing but npm packages, this folder and the parser of raw
 * mail (src/webhooks/mime.ts), so it loads the same from TypeScript sources (through tsx) and from dist/.
 */

/** What pool.ts gives each worker as its workerData. */
export interface WorkerSettings {
  /** The nice increment of this thread (lowerPriority). */
  nice: number;
}

/**
 * Lowers this thread's scheduling priority by `nice`, so that on a machine with few cores a
 * worker busy for seconds with a large mail yields the CPU to the event loop, which answers
 * every request: on two cores, with workers at the event loop's priority, the scheduler left the
 * event loop waiting 40 to 130 ms at a time while a 20 MB mail was parsed and cleaned
 * (docs/benchmarks.md). Linux keeps a nice value per thread, and setpriority on a thread's id
 * (the last part of /proc/thread-self) changes that thread alone. Raising one's own nice value
 * needs no privilege; where there is no /proc/thread-self (not Linux) or the kernel refuses, the
 * worker runs at the process's priority, as it would without.
 */
function lowerPriority(nice: number): void {
  if (nice <= 0) return;
  try {
    const threadId = Number(path.basename(readlinkSync('/proc/thread-self')));
    setPriority(threadId, Math.min(19, getPriority(threadId) + nice));
  } catch {
    // Not Linux, or not allowed: nothing to do.
  }
}

lowerPriority((workerData as WorkerSettings).nice);
const port = parentPort!;
port.on('message', ({ task }: { task: ContentTask }) => {
  runTask(task).then(
    ({ result, transfer }) => port.postMessage({ result }, transfer),
    (error: unknown) => port.postMessage({ error: error instanceof Error ? error.message : String(error) }),
  );
});
// Modules are loaded: tasks may come, and their time limit starts with them.
port.postMessage('ready');
