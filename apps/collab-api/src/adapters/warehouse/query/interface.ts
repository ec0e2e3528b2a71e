import type { ReadableCatalog } from './analyze.js';

export const EXPORT_FORMATS = ['CSV', 'JSON', 'AVRO', 'PARQUET'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_COMPRESSIONS = ['GZIP', 'DEFLATE', 'NONE'] as const;
export type ExportCompression = (typeof EXPORT_COMPRESSIONS)[number];

/** A column of a stored result: its name in the answer, the warehouse's type, and whether it is masked. */
export interface ResultColumn {
  name: string;
  type: string;
  private: boolean;
}

export interface QueryRequest {
  /** The query job's id: its stored result is named after it. */
  jobId: string;
  sql: string;
  /** The tables the job may read, with the columns it must mask. */
  catalog: ReadableCatalog;
  signal: AbortSignal;
  /**
   * Told the catalog keys of the tables the statement references once they are known: before it
   * runs, and before an analysis rule refuses it (the worker records them for the owners' access logs).
   */
  onTables?: (keys: string[]) => Promise<void>;
  /** BigQuery's maximumBytesBilled: a query that would be billed more fails (bytesBilledLimitExceeded) before it runs. */
  maximumBytesBilled?: bigint;
}

/** What a query would read and be billed for, without running it (a dry run). */
export interface QueryEstimate extends QueryUsage {
  /** Catalog keys of the tables the statement references. */
  referenced: string[];
}

/** What running a query measured, and where its result is kept. */
export interface QueryOutcome {
  columns: ResultColumn[];
  totalRows: number;
  /** Result rows in which at least one value was masked (a masked column held a value there). */
  privateRowCount: number;
  /** Groups an aggregation rule's threshold dropped from the result (0 without one). */
  suppressedRowCount: number;
  bytesProcessed: number;
  /** What the query is charged for: BigQuery's totalBytesBilled; on DuckDB the bytes processed with BigQuery's minimums. */
  bytesBilled: number;
  /** Slot milliseconds on BigQuery; wall-clock milliseconds on DuckDB, which has no slots. */
  elapsedMs: number;
  cacheHit: boolean;
  numDmlAffectedRows: number | null;
  destinationTable: Record<string, string> | null;
  /** BigQuery's statistics objects; null where the warehouse has none. */
  statistics: Record<string, unknown> | null;
}

/** What a query processed, and is billed for. */
export interface QueryUsage {
  bytesProcessed: number;
  bytesBilled: number;
}

/** Why a query failed, for the job's error_result (`reason`) and error_details (`message`); never a path or physical name. */
export class QueryFailure extends Error {
  override name = 'QueryFailure';
  constructor(
    // stopped: the request's signal was aborted (a cancel, the timeout, the worker stopping).
    // resourcesExceeded: the query would take more memory or rows than the service allows one.
    // unsupported: an export the warehouse cannot make (a format and compression, or a storage backend).
    // bytesBilledLimitExceeded: the query would be billed more than the job's maximumBytesBilled (BigQuery's reason).
    readonly reason:
      'invalidQuery' | 'accessDenied' | 'stopped' | 'resourcesExceeded' | 'unsupported' | 'bytesBilledLimitExceeded',
    message: string,
    /** A stopped query: what it had processed by then (BigQuery bills a cancelled job for it); none when it never started. */
    readonly usage?: QueryUsage,
  ) {
    super(message);
  }
}

/**
 * Runs query jobs on the warehouse and keeps their results, which are then read page by page and
 * exported without running the query again.
 */
export interface QueryEngine {
  /** Checks, runs and stores; throws QueryFailure. Running again replaces the stored result. */
  run(request: QueryRequest): Promise<QueryOutcome>;
  /** Checks as `run` does (the same refusals, as QueryFailure) and tells what it would read and bill; stores nothing. */
  dryRun(request: Pick<QueryRequest, 'sql' | 'catalog' | 'signal'>): Promise<QueryEstimate>;
  /** Rows `offset` to `offset + limit` of a stored result, in the result's order, keyed by column name; UpstreamError (502) when it cannot be read. */
  readRows(jobId: string, columns: ResultColumn[], range: { offset: number; limit: number }): Promise<Record<string, unknown>[]>;
  /** A stored result's columns with their types as BigQuery names them (`INT64`, `ARRAY<STRING>`), for result pages. */
  resultSchema(columns: ResultColumn[]): { name: string; type: string }[];
  /** Deletes a stored result (its results expired); one that is not there is already deleted. */
  dropResult(jobId: string): Promise<void>;
  /**
   * Writes a stored result in the format and compression asked for: into `file` (a local path),
   * which the caller then stores under `key` ('local-file'), or straight into object storage under
   * `key` ('object-storage': BigQuery's extract jobs write to Cloud Storage themselves).
   */
  exportResult(
    jobId: string,
    columns: ResultColumn[],
    options: { format: ExportFormat; compression: ExportCompression; file: string; key: string },
  ): Promise<'local-file' | 'object-storage'>;
  close(): Promise<void>;
}
