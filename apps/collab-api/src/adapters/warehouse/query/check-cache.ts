/**
 * The sandbox's checks, remembered. A check is a function of the caller's text, the catalog it is
 * checked against (tables, columns, types, what is masked) and its options alone, DuckDB being
 * pinned; and analysts run the same query again and again. So a check made before, of the same
 * text against the same catalog, is answered without the sandbox (which parses, prints and plans
 * in a thread of its own: some milliseconds for the smallest query). Anything else the check comes
 * to depend on must be part of the catalog or the options, which the key covers whole.
 *
 * Bounded: the most recent `entries` checks, of texts up to `maxTextLength` characters, and only
 * those of at most `maxWeight` parts (nodes of the text, columns read and result columns: what a
 * check's size grows with). Refusals and failures are not kept.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ReadableCatalog } from './analyze.js';
import type { CheckedQuery, CheckOptions, Sandbox } from './sandbox.js';

/** What query engines keep: some dozens of ordinary checks, a few megabytes at most. */
export const CHECK_CACHE = { entries: 64, maxTextLength: 10_000, maxWeight: 5_000 };

export function rememberingChecks(
  sandbox: Sandbox,
  limits: { entries: number; maxTextLength: number; maxWeight: number },
): Sandbox {
  const checks = new LRUCache<string, Promise<CheckedQuery>>({ max: limits.entries });
  return {
    check(text: string, catalog: ReadableCatalog, options: CheckOptions = {}): Promise<CheckedQuery> {
      if (text.length > limits.maxTextLength) return sandbox.check(text, catalog, options);
      const key = checkKey(text, catalog, options);
      const known = checks.get(key);
      if (known) return known;
      const checked = sandbox.check(text, catalog, options);
      const forget = () => {
        if (checks.peek(key) === checked) checks.delete(key);
      };
      checks.set(key, checked);
      checked.then((done) => weight(done) > limits.maxWeight && forget(), forget);
      return checked;
    },
    locate: (checked, executed, message) => sandbox.locate(checked, executed, message),
    namedTables: (text, catalog) => sandbox.namedTables(text, catalog),
    close: () => sandbox.close(),
  };
}

/** What a check's size grows with. */
function weight(checked: CheckedQuery): number {
  let columns = 0;
  for (const read of checked.read.values()) columns += read.size;
  return checked.located.length + columns + (checked.lineage?.columns.length ?? 0);
}

/** A digest of everything a check depends on; Maps, Sets and bigints are written out, so that no two inputs meet. */
export function checkKey(text: string, catalog: ReadableCatalog, options: CheckOptions): string {
  const written = JSON.stringify([text, catalog, options], (_key, value: unknown) => {
    if (value instanceof Map) return { map: [...value] };
    if (value instanceof Set) return { set: [...value] };
    if (typeof value === 'bigint') return { bigint: String(value) };
    return value;
  });
  return createHash('sha256').update(written).digest('hex');
}
