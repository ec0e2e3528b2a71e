import { setting } from '@repo/config';
import type { z } from 'zod';
import { duckDbSizeBytes, type WarehouseSettings } from '../adapters/warehouse/settings.js';

/** The process's memory budget (budget.ts): environment variables to spread into the app's configuration schema. */
export function memorySettings() {
  return {
    COLLAB_MEMORY_BUDGET_MB: setting
      .integer({ min: 128, max: 1_048_576 })
      .default(1024)
      .describe(
        "How much more memory (MiB) the process may take than it had at start: its data segment is capped there (RLIMIT_DATA, set with util-linux's prlimit on Linux), so a DuckDB allocation past it fails the query (`resourcesExceeded`) instead of growing the process until the kernel kills it; a list a query would build from constants is held to budget/1 KiB values before it runs. Node's heap counts too: keep it well above the API's own needs, and below the container's memory limit. COLLAB_DUCKDB_MEMORY_LIMIT must fit in it.",
      ),
  };
}

export type MemorySettings = z.output<z.ZodObject<ReturnType<typeof memorySettings>>>;

/** DuckDB's buffer pool takes its memory inside the budget, with room left for the rest. */
export function checkMemorySettings(settings: MemorySettings & WarehouseSettings, ctx: z.RefinementCtx): void {
  if (settings.COLLAB_WAREHOUSE !== 'duckdb') return;
  if (duckDbSizeBytes(settings.COLLAB_DUCKDB_MEMORY_LIMIT) >= settings.COLLAB_MEMORY_BUDGET_MB * 2 ** 20) {
    ctx.addIssue({
      code: 'custom',
      path: ['COLLAB_DUCKDB_MEMORY_LIMIT'],
      message: `must be less than COLLAB_MEMORY_BUDGET_MB (${settings.COLLAB_MEMORY_BUDGET_MB} MiB), which it is part of`,
    });
  }
}
