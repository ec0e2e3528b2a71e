/** A task run in this process now and then every interval, never two rounds at once. */
export interface Periodic {
  /** Waits for the round under way, and runs no more. */
  stop(): Promise<void>;
}

/**
 * Runs `round` now (or, with `startAfterInterval`, once the interval has passed) and then
 * `intervalSeconds` after each round ends (0: once). A round that throws is handed to `onError`,
 * and the next one tries again. The timer never keeps the process alive.
 */
export function startPeriodic(
  round: () => Promise<void>,
  options: { intervalSeconds: number; onError: (error: unknown) => void; startAfterInterval?: boolean },
): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const run = () => {
    current = round()
      .catch(options.onError)
      .finally(() => {
        if (!stopped && options.intervalSeconds > 0) {
          timer = setTimeout(run, options.intervalSeconds * 1000);
          timer.unref();
        }
      });
  };
  if (options.startAfterInterval) {
    timer = setTimeout(run, options.intervalSeconds * 1000);
    timer.unref();
  } else {
    run();
  }
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
