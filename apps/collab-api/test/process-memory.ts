/** Another process's memory, from /proc (Linux): for the tests and benchmarks of a server process's budget. */
import { readFile, writeFile } from 'node:fs/promises';

/** Resident memory now (VmRSS) and its peak (VmHWM), and the data segment the memory budget caps (VmData), in bytes. */
export async function processMemory(pid: number): Promise<{ current: number; peak: number; data: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { current: kb('VmRSS'), peak: kb('VmHWM'), data: kb('VmData') };
}

/** Starts the process's peak resident memory (VmHWM) anew from its current one. */
export async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}
