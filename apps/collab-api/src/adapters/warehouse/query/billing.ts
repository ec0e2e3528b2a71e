/** BigQuery's on-demand billing of a query's bytes, which the DuckDB engine applies to its own measure (pure). */

const BYTES_PER_MB = 2 ** 20;

/** BigQuery's on-demand minimum, per table a query references and per query: 10 MB (of 2^20 bytes). */
export const MIN_BILLED_BYTES = 10 * BYTES_PER_MB;

/**
 * The bytes a query is billed for, as BigQuery bills on demand: each referenced table's bytes
 * (those the query read of it; 0 for a table it names but reads no column of) count at least
 * MIN_BILLED_BYTES, the query at least MIN_BILLED_BYTES even with no table, and the total is
 * rounded up to a whole MB.
 */
export function billedBytes(bytesPerTable: number[]): number {
  const atLeastMinimum = (bytes: number) => Math.max(bytes, MIN_BILLED_BYTES);
  const total = atLeastMinimum(bytesPerTable.reduce((sum, bytes) => sum + atLeastMinimum(bytes), 0));
  return Math.ceil(total / BYTES_PER_MB) * BYTES_PER_MB;
}

/**
 * Why a query billed `bytesBilled` may not run under a job's maximumBytesBilled, in BigQuery's
 * words; undefined when it may.
 */
export function bytesBilledRefusal(bytesBilled: number, maximumBytesBilled: bigint): string | undefined {
  if (BigInt(bytesBilled) <= maximumBytesBilled) return undefined;
  return `Query exceeded limit for bytes billed: ${maximumBytesBilled}. ${bytesBilled} or higher required.`;
}
