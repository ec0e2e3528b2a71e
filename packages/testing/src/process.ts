import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import readline from 'node:readline';

export interface ServiceProcess {
  child: ChildProcess;
  /** Base URL from the service's "listening" log line. */
  url: string;
  /** JSON log lines printed so far. */
  logs: Record<string, unknown>[];
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

// tsx's loader, imported into the service's own process: the tsx command would run the service in a
// child process of its own, and a signal (a crash test's SIGKILL) would reach tsx, not the service.
const tsxLoader = pathToFileURL(
  path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist', 'loader.mjs'),
).href;

/**
 * Services started by the test file (or bench) that imported this module and still running. Under
 * jest they are killed after the file's last test, so that a test that timed out before stopping
 * its process (a query that ran on, a crash point never reached) leaves no process behind to hold
 * the warehouse's lock and the CPU through the files after it.
 */
const running = new Set<ChildProcess>();
const { afterAll } = globalThis as { afterAll?: (fn: () => void) => void };
afterAll?.(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** The command that runs a service's entry point from source, as `pnpm dev` would (tsx, workspace sources), as one process. */
export function entryCommand(entry: string, args: string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: ['--import', tsxLoader, '--conditions=@repo/source', entry, ...args] };
}

function spawnEntry(
  entry: string,
  options: { cwd: string; env: Record<string, string | undefined>; args?: string[]; built?: boolean; nodeArgs?: string[] },
): ChildProcess {
  const env = { ...process.env, ...options.env };
  // The jest worker's options (--experimental-vm-modules) are not the service's.
  delete env.NODE_OPTIONS;
  for (const [key, value] of Object.entries(options.env)) if (value === undefined) delete env[key];
  const { command, args } = options.built
    ? { command: process.execPath, args: [entry, ...(options.args ?? [])] }
    : entryCommand(entry, options.args);
  return spawn(command, [...(options.nodeArgs ?? []), ...args], {
    cwd: options.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Starts a service's real entry point from source, as `pnpm dev` would, and waits until it
 * logs that it listens. Pass `PORT: '0'` to get a free port. With `keepLogs: false`, lines after
 * start-up are read and dropped (a benchmark's millions of request lines). With `built`, `entry`
 * is a built file run by plain node, as the image runs it (a benchmark of the process's memory).
 */
export async function startService(
  entry: string,
  options: {
    cwd: string;
    env: Record<string, string | undefined>;
    args?: string[];
    timeoutMs?: number;
    keepLogs?: boolean;
    built?: boolean;
    /** Node's own options (a built service's, as its image passes them). */
    nodeArgs?: string[];
  },
): Promise<ServiceProcess> {
  const child = spawnEntry(entry, options);
  running.add(child);
  child.once('exit', () => running.delete(child));
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = readline.createInterface({ input: child.stdout! });
  const exited = once(child, 'exit');
  let started = false;
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "listening" line within ${options.timeoutMs ?? 30_000} ms\n${stderr}`)),
      options.timeoutMs ?? 30_000,
    );
    lines.on('line', (line) => {
      if (started && options.keepLogs === false) return;
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'listening' && typeof entry.url === 'string') {
          started = true;
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a JSON log line
      }
    });
    void exited.then(([code]) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${String(code)} before listening\n${stderr}`));
    });
  });
  // A service that never came up must not outlive the caller.
  const url = await listening.catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    child,
    url,
    logs,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/**
 * Runs an entry point expected to exit by itself (bad configuration, a one-off command); with
 * `built`, `entry` is a built file run by plain node, as startService runs one.
 */
export async function runToExit(
  entry: string,
  options: { cwd: string; env: Record<string, string | undefined>; args?: string[]; built?: boolean },
): Promise<ExitedProcess> {
  const child = spawnEntry(entry, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}
