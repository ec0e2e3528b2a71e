import { string } from './settings.js';

/**
 * A named step of a write that spans two systems (database and files, database and a mail
 * provider or warehouse), where crash tests stop the process.
 */
export type CrashPoint = (point: string) => void;

/** The setting crash tests start a service with. */
export function crashTestSettings() {
  return {
    TEST_CRASH_POINT: string()
      .optional()
      .describe(
        'Tests only: the process kills itself with SIGKILL, as `kill -9` would, when it reaches this named step of a write (see the crash tests). Never set in production.',
      ),
  };
}

/**
 * The crash points of a process: with `configured` unset, every call does nothing; otherwise the
 * call naming that point kills the process on the spot (no handler, no flush, no cleanup).
 */
export function crashPoints(configured: string | undefined): CrashPoint {
  if (configured === undefined) return () => {};
  return (point) => {
    if (point === configured) process.kill(process.pid, 'SIGKILL');
  };
}
