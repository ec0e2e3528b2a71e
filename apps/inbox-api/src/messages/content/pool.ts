import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ServiceUnavailableError, ValidationError } from '@repo/errors';
import type { Email } from 'postal-mime';
import type { FormFields } from '../../webhooks/form.js';
import type { ParsedMail } from '../../webhooks/mime.js';
import type { WorkerSettings } from './worker.js';
import {
  type ContentTask,
  type MessageContent,
  type RenderedMessage,
  runTask,
  type TaskResult,
  type TaskResults,
} from './message.js';

/*
 * Rendering, cleaning and the parsing of received mail run in worker threads, so that a large or
 * hostile body never holds the event loop: the main thread only posts the body and receives the
 * result. Ordinary mail, below `inlineBelowBytes`, is done inline, where a worker's round trip
 * would cost more than the work.
 */

export interface ContentPoolOptions {
  /** Workers at most; each is started when a task first needs it. */
  threads: number;
  /**
   * A task whose worker spends longer on it (CPU time; see timeLimitVerdict) is stopped, its
   * worker with it, and rejected with ContentTooComplexError.
   */
  timeoutMs: number;
  /** Bodies smaller than this (UTF-8 bytes of the Markdown, of html + text, or of the raw mail) are done inline. */
  inlineBelowBytes: number;
  /**
   * How much lower the workers' scheduling priority is than the event loop's (a nice increment,
   * 0 to 19; Linux only): see worker.ts. Default 0, the same priority.
   */
  nice?: number;
}

export interface ContentPool {
  renderMessage(markdown: string): Promise<RenderedMessage>;
  cleanMessage(body: { html: string; text: string }): Promise<MessageContent>;
  /**
   * Raw MIME (src/webhooks/mime.ts, parseMail): rejects with the reason when it will not be read.
   * The caller keeps the bytes: they are copied to the worker, unless they are in shared memory
   * (a SharedArrayBuffer, as src/webhooks/body.ts keeps a large part), which the worker reads as they are.
   */
  parseMail(raw: Uint8Array): Promise<ParsedMail>;
  /** A header block alone (src/webhooks/mime.ts, parseHeaders). */
  parseHeaders(block: string): Promise<Email>;
  /** A URL-encoded body's fields (src/webhooks/form.ts), the values' buffers handed back. */
  parseForm(body: Uint8Array): Promise<FormFields>;
  /** Rejects the tasks not finished and stops the workers. */
  close(): Promise<void>;
}

/** A body whose rendering or cleaning took longer than the pool allows: the client's to simplify. */
export class ContentTooComplexError extends ValidationError {
  constructor(timeoutMs: number) {
    const message = `The message body could not be processed within ${timeoutMs} ms`;
    super([{ loc: ['body', 'body'], msg: message, type: 'content_too_complex' }], message);
  }
}

interface Job {
  task: ContentTask;
  resolve: (result: TaskResult) => void;
  reject: (error: unknown) => void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The uncaught error that is stopping the worker, if any. */
  error: unknown;
}

export function createContentPool(options: ContentPoolOptions): ContentPool {
  const threads: Thread[] = [];
  const queue: Job[] = [];
  let closed = false;

  const run = <Task extends ContentTask>(task: Task, bytes: number): Promise<TaskResults[Task['kind']]> => {
    if (closed) return Promise.reject(shuttingDown());
    const result: Promise<TaskResult> =
      bytes < options.inlineBelowBytes
        ? runTask(task).then((outcome) => outcome.result)
        : new Promise((resolve, reject) => {
            queue.push({ task, resolve, reject });
            dispatch();
          });
    // The worker answers a task of a kind with that kind's result (message.ts, runTask).
    return result as Promise<TaskResults[Task['kind']]>;
  };

  /** Gives queued jobs, oldest first, to ready idle workers, and starts workers for the rest. */
  const dispatch = () => {
    for (const thread of threads) {
      if (queue.length === 0) return;
      if (thread.ready && !thread.job) assign(thread, queue.shift()!);
    }
    let starting = threads.filter((thread) => !thread.ready).length;
    while (starting < queue.length && threads.length < options.threads) {
      try {
        threads.push(start());
        starting++;
      } catch (error) {
        queue.shift()!.reject(error);
      }
    }
  };

  const assign = (thread: Thread, job: Job) => {
    thread.job = job;
    thread.worker.ref();
    thread.worker.postMessage({ task: job.task });
    const startedAt = performance.now();
    const cpuAtStart = cpuMs(thread.worker);
    const check = async () => {
      const [from, to] = await Promise.all([cpuAtStart, cpuMs(thread.worker)]);
      if (thread.job !== job) return; // answered, or stopped, meanwhile
      const elapsedMs = performance.now() - startedAt;
      const spentMs = from === undefined || to === undefined ? elapsedMs : to - from;
      const verdict = timeLimitVerdict({ limitMs: options.timeoutMs, spentMs, elapsedMs });
      if (verdict.stop) {
        void stop(thread);
        job.reject(new ContentTooComplexError(options.timeoutMs));
        dispatch();
      } else {
        thread.timer = setTimeout(() => void check(), verdict.recheckInMs);
      }
    };
    thread.timer = setTimeout(() => void check(), options.timeoutMs);
  };

  const finish = (thread: Thread) => {
    clearTimeout(thread.timer);
    const job = thread.job!;
    thread.job = undefined;
    // An idle worker does not keep the process alive.
    thread.worker.unref();
    return job;
  };

  /** Forgets a worker and terminates it: what it would still say is not heard. */
  const stop = (thread: Thread) => {
    clearTimeout(thread.timer);
    thread.job = undefined;
    threads.splice(threads.indexOf(thread), 1);
    return thread.worker.terminate();
  };

  const start = (): Thread => {
    const { url, execArgv } = workerModule();
    const thread: Thread = {
      worker: new Worker(url, { execArgv, workerData: { nice: options.nice ?? 0 } satisfies WorkerSettings }),
      ready: false,
      job: undefined,
      timer: undefined,
      error: undefined,
    };
    const { worker } = thread;
    worker.on('message', (message: 'ready' | { result: TaskResult } | { error: string }) => {
      if (message === 'ready') {
        thread.ready = true;
        worker.unref();
      } else if (thread.job) {
        const job = finish(thread);
        if ('result' in message) job.resolve(message.result);
        else job.reject(new Error(message.error));
      }
      dispatch();
    });
    worker.on('error', (error) => {
      thread.error = error;
    });
    worker.on('exit', (code) => {
      if (!threads.includes(thread)) return; // stopped on purpose
      threads.splice(threads.indexOf(thread), 1);
      const error = thread.error ?? new Error(`A content worker stopped with exit code ${code}`);
      // A crash fails its own task; a worker that could not start fails the oldest waiting one,
      // so that a broken install answers errors rather than starting workers forever.
      if (thread.job) finish(thread).reject(error);
      else if (!thread.ready) queue.shift()?.reject(error);
      dispatch();
    });
    return thread;
  };

  return {
    renderMessage: (markdown) => run({ kind: 'render', markdown }, Buffer.byteLength(markdown)),
    cleanMessage: (body) =>
      run(
        { kind: 'clean', body: { html: body.html, text: body.text } },
        Buffer.byteLength(body.html) + Buffer.byteLength(body.text),
      ),
    parseMail: (raw) => run({ kind: 'parse', raw }, raw.byteLength),
    parseHeaders: (block) => run({ kind: 'headers', block }, Buffer.byteLength(block)),
    parseForm: (body) => run({ kind: 'form', body }, body.byteLength),
    close: async () => {
      closed = true;
      for (const job of queue.splice(0)) job.reject(shuttingDown());
      await Promise.all(
        [...threads].map((thread) => {
          thread.job?.reject(shuttingDown());
          return stop(thread);
        }),
      );
    },
  };
}

/** A task may wait for a core this many times its time limit, at most, before it is stopped whatever it spent. */
const WALL_LIMIT_FACTOR = 4;
/** The least time between two checks of a task's CPU time. */
const RECHECK_MS = 10;

/**
 * Pure: what the pool does with a task whose timer fired. The limit counts the CPU time its
 * worker spent on it (`spentMs`), not the time the worker waited for a core: content is refused
 * (ContentTooComplexError) for what it costs, not for the machine's load, and a worker at a lower
 * priority (`nice`) on a busy machine is not stopped for yielding to the event loop. So that no
 * task waits forever, WALL_LIMIT_FACTOR times the limit of wall time (`elapsedMs`) stops it
 * whatever it spent. Otherwise the timer is set again for what is left.
 */
export function timeLimitVerdict(task: {
  limitMs: number;
  spentMs: number;
  elapsedMs: number;
}): { stop: true } | { stop: false; recheckInMs: number } {
  const wallLeft = WALL_LIMIT_FACTOR * task.limitMs - task.elapsedMs;
  const cpuLeft = task.limitMs - task.spentMs;
  if (cpuLeft <= 0 || wallLeft <= 0) return { stop: true };
  return { stop: false, recheckInMs: Math.max(RECHECK_MS, Math.min(cpuLeft, wallLeft)) };
}

/** The CPU time a worker thread has spent, in ms; undefined once it is not running. */
function cpuMs(worker: Worker): Promise<number | undefined> {
  return worker.cpuUsage().then(
    ({ user, system }) => (user + system) / 1000,
    () => undefined,
  );
}

function shuttingDown(): ServiceUnavailableError {
  return new ServiceUnavailableError('Message content cannot be processed: the service is shutting down');
}

/**
 * worker.ts or worker.js beside this module, as the app runs from its TypeScript sources (tsx,
 * jest) or from dist/. TypeScript is loaded through tsx's loader, resolved from here so that the
 * working directory does not matter.
 */
function workerModule(): { url: URL; execArgv: string[] } {
  const extension = path.extname(fileURLToPath(import.meta.url));
  const url = new URL(`./worker${extension}`, import.meta.url);
  if (extension !== '.ts') return { url, execArgv: [] };
  return { url, execArgv: ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] };
}
