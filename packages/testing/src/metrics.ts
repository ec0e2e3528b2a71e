/** A service's Prometheus figures (its /metrics), as the benchmarks read them. */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from './process.js';

/** The value of `name`'s first series in Prometheus text exposition; NaN when it has none. */
export function metricValue(text: string, name: string): number {
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
}

/** The value of `name`'s first series on the service at `baseUrl` now. */
export async function scrapeMetric(baseUrl: string, name: string): Promise<number> {
  return metricValue(await (await fetch(`${baseUrl}/metrics`)).text(), name);
}

/** The node flags heapUsedAfterCollection needs: a heap snapshot into `dir` on SIGUSR2. */
export const heapSnapshotArgs = (dir: string): string[] => ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`];

/**
 * The service's V8 heap in use right after a full collection, in bytes: a heap snapshot collects
 * first, so the service (started with heapSnapshotArgs(dir)) is signalled to write one, and asked
 * for nodejs_heap_size_used_bytes once the file appears: the snapshot is written on its main
 * thread, so /metrics answers only after it. The snapshot is then removed.
 */
export async function heapUsedAfterCollection(service: Pick<ServiceProcess, 'child' | 'url'>, dir: string): Promise<number> {
  const earlier = new Set(await readdir(dir));
  service.child.kill('SIGUSR2');
  for (;;) {
    const written = (await readdir(dir)).filter((name) => !earlier.has(name));
    if (written.length > 0) {
      const used = await scrapeMetric(service.url, 'nodejs_heap_size_used_bytes');
      await Promise.all(written.map((name) => rm(path.join(dir, name), { force: true })));
      return used;
    }
    await sleep(50);
  }
}
