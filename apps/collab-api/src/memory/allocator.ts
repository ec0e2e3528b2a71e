/**
 * Imported first by server.ts, before DuckDB's library loads (it reads this once, then):
 * DuckDB's allocator, its own jemalloc, keeps the address space of the memory it frees by
 * default, which would go on counting against the memory budget (budget.ts: RLIMIT_DATA counts
 * mappings, used or not) after a large query ended. `retain:false` gives it back to the system,
 * once jemalloc's background thread (allocator_background_threads, set by the warehouse) purges it.
 */
process.env.DUCKDB_JE_MALLOC_CONF ??= 'retain:false';
