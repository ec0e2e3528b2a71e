/**
 * The sandbox in a worker thread of its own (sandbox-worker.ts). Checking a query parses DuckDB's
 * JSON of its parse tree and its plan and walks both: a millisecond or two for an ordinary query,
 * but seconds for a wide one (a plan carries every column of every table it scans), which must
 * not hold the event loop. Requests are answered as they finish; a worker that stops fails the
 * requests it held, and the next request starts another. An idle worker does not keep the
 * process alive.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { QueryRefused, type ReadableCatalog } from './analyze.js';
import type { Position } from './failures.js';
import { QueryFailure } from './interface.js';
import type { CheckedQuery, CheckOptions, Sandbox } from './sandbox.js';

export type SandboxRequest =
  | { id: number; method: 'check'; args: [string, ReadableCatalog, CheckOptions] }
  | { id: number; method: 'locate'; args: [CheckedQuery, string, string] }
  | { id: number; method: 'namedTables'; args: [string, ReadableCatalog] };

/** An error as it crosses the thread: its class by name, and a QueryFailure's reason. */
export interface SandboxError {
  name: string;
  message: string;
  reason?: QueryFailure['reason'];
}

type Reply = { id: number; result: unknown } | { id: number; error: SandboxError } | 'ready';

/** The error the worker sent, as the class it was thrown as. */
function rebuilt(error: SandboxError): Error {
  if (error.name === 'QueryRefused') return new QueryRefused(error.message);
  if (error.name === 'QueryFailure' && error.reason) return new QueryFailure(error.reason, error.message);
  return new Error(error.message);
}

interface Waiting {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * V8's limits of the sandbox's thread. Without them, a new isolate reserves some 500 MB of address
 * space (its code range and heap), which the process's memory budget (src/memory: RLIMIT_DATA)
 * counts: a thread started after the budget was set (the first check, or a restart) would end the
 * process with V8's "Failed to reserve virtual memory". With them it reserves about 32 MB. A check
 * that needs more heap than this (a plan of a very wide query) ends the thread alone, and the check fails.
 */
const THREAD_LIMITS = { codeRangeSizeMb: 16, maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 512 };

/**
 * The sandbox's thread, started now and ready (its DuckDB instance open) when this resolves: its
 * memory is then part of the process's size at start, which the memory budget is counted from.
 */
export async function openSandboxThread(): Promise<Sandbox> {
  let worker: Worker | undefined;
  let lastId = 0;
  let closed = false;
  const waiting = new Map<number, Waiting>();

  const failAll = (error: Error) => {
    for (const entry of waiting.values()) entry.reject(error);
    waiting.clear();
  };

  const start = (): Worker => {
    const { url, execArgv } = workerModule();
    const started = new Worker(url, { execArgv, resourceLimits: THREAD_LIMITS });
    started.on('message', (reply: Reply) => {
      if (reply === 'ready') return;
      const entry = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (waiting.size === 0) started.unref();
      if (!entry) return;
      if ('result' in reply) entry.resolve(reply.result);
      else entry.reject(rebuilt(reply.error));
    });
    let failure: Error | undefined;
    started.on('error', (error: Error) => {
      failure = error;
    });
    started.on('exit', (code) => {
      if (worker === started) worker = undefined;
      failAll(failure ?? new Error(`The query sandbox's thread stopped (exit code ${code})`));
    });
    return started;
  };

  const call = (request: Omit<SandboxRequest, 'id'>): Promise<unknown> => {
    if (closed) return Promise.reject(new Error('The query sandbox is closed'));
    worker ??= start();
    const id = ++lastId;
    const current = worker;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      current.ref();
      current.postMessage({ ...request, id });
    });
  };

  const first = start();
  worker = first;
  await new Promise<void>((resolve, reject) => {
    first.on('message', (reply: Reply) => reply === 'ready' && resolve());
    first.once('exit', (code) => reject(new Error(`The query sandbox's thread did not start (exit code ${code})`)));
  });
  first.unref();
  return {
    check: (text, catalog, options = {}) => call({ method: 'check', args: [text, catalog, options] }) as Promise<CheckedQuery>,
    locate: (checked, executed, message) =>
      call({ method: 'locate', args: [checked, executed, message] }) as Promise<Position | undefined>,
    namedTables: (text, catalog) => call({ method: 'namedTables', args: [text, catalog] }) as Promise<string[]>,
    close: async () => {
      closed = true;
      const stopping = worker;
      worker = undefined;
      failAll(new Error('The query sandbox is closed'));
      await stopping?.terminate();
    },
  };
}

/**
 * sandbox-worker.ts or .js beside this module, as the app runs from its TypeScript sources (tsx,
 * jest) or from dist/. TypeScript is loaded through tsx's loader, resolved from here so that the
 * working directory does not matter.
 */
function workerModule(): { url: URL; execArgv: string[] } {
  const extension = path.extname(fileURLToPath(import.meta.url));
  const url = new URL(`./sandbox-worker${extension}`, import.meta.url);
  if (extension !== '.ts') return { url, execArgv: [] };
  return { url, execArgv: ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] };
}
