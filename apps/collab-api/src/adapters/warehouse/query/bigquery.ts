/**
 * Query jobs on BigQuery, through its REST API (jobs.insert/get/cancel, getQueryResults,
 * tabledata.list, tables.get, datasets.insert).
 *
 * Checking. The text's tables (`dataset_name.table_name`) are rewritten to physical names by a
 * GoogleSQL tokenizer (googlesql.ts), which refuses a table position naming anything but a
 * readable table or a CTE. A dry run then tells what BigQuery would run: the job is refused unless
 * its statementType is SELECT (not a script, DML or DDL) and every referencedTables entry is a
 * readable table of the job's catalog, so never a stored result (dataset `collab_results`) nor a
 * dataset the project may not read, whatever the text's spelling or a view's definition.
 *
 * Privacy (contract.md). Which result columns are private comes from DuckDB's lineage of the
 * same text (sandbox.ts, as duckdb.ts runs it) when DuckDB parses and binds it and its columns
 * line up with the dry run's schema; otherwise (GoogleSQL-only syntax such as backticks or
 * `* EXCEPT`) every column is private once a referenced table has a masked column. A result with a
 * private column is stored by a statement around the query that nulls those columns and adds
 * `_collab_masked_row` (did a nulled column hold a value), so masked values never reach the stored
 * table; a COUNT over that flag gives private_row_count and a free DDL statement then drops it.
 * BigQuery keeps a query's ORDER BY in its destination table, but does not promise that order
 * through the statement around it: a result with private columns may be stored in another order.
 * A query job that reads a table with masked columns fails with BigQuery's reason only, as its
 * message may carry the value the query failed on.
 *
 * Running. A query job (jobs.insert) writes the result to `collab_results.r_<job id>` (dataset made
 * on first use, in the configured location; WRITE_TRUNCATE), under a BigQuery job id made from the
 * query job's id: a retry after a crash finds that job (409) and follows it instead of running the
 * query again; only a job an earlier attempt cancelled is run anew, under the next id
 * (`..._2`, `..._3`). jobs.get is polled until DONE; an abort cancels the job (jobs.cancel) and
 * reports what BigQuery billed it for until then. The bytes billed are BigQuery's totalBytesBilled.
 * Pages read the stored table with tabledata.list (`startIndex`), so page N costs what page 1 does.
 * Exports are extract jobs from the stored table into the app's Cloud Storage bucket.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BigQuery } from '@google-cloud/bigquery';
import { UpstreamError } from '@repo/errors';
import { type BigQueryOptions, bigQueryClient, call, ignoring, restCall, toUpstreamError } from '../bigquery-client.js';
import type { TableRef } from '../interface.js';
import { physicalNames, withoutPhysicalNames } from '../names.js';
import type { ReadableCatalog } from './analyze.js';
import { withheldMessage } from './failures.js';
import {
  type BigQueryTableReference,
  checkDryRun,
  type DryRunStatistics,
  extractSettings,
  googleSqlType,
  jobStatistics,
  jsonValue,
  maskingSql,
  MASKED_ROW,
  parseType,
  privateColumns,
} from './bigquery-rules.js';
import { billedBytes } from './billing.js';
import { resultPrivacy, type Sandbox } from './sandbox.js';
import { CHECK_CACHE, rememberingChecks } from './check-cache.js';
import { openSandboxThread } from './sandbox-thread.js';
import { commonText, rewriteTables, withThreshold } from './googlesql.js';
import { thresholdSql } from './rules.js';
import type {
  ExportCompression,
  ExportFormat,
  QueryEngine,
  QueryEstimate,
  QueryOutcome,
  QueryRequest,
  QueryUsage,
  ResultColumn,
} from './interface.js';
import { QueryFailure } from './interface.js';

const RESULTS_DATASET = 'collab_results';
/** BigQuery's failure reasons a job keeps; any other is `invalidQuery`. */
const PASSED_ON_REASONS = ['accessDenied', 'bytesBilledLimitExceeded'] as const;
/** Attempts of one query job whose BigQuery jobs were cancelled (worker stops) before one runs to its end. */
const MAX_ATTEMPTS = 20;
/** jobs.get calls after a jobs.cancel, to read what the cancelled job was billed (the cancel ends it soon, not at once). */
const READS_AFTER_CANCEL = 10;

interface JobResource {
  jobReference: { projectId: string; jobId: string; location?: string };
  status?: { state?: string; errorResult?: { reason?: string; message?: string } };
  statistics?: Record<string, unknown> & {
    totalBytesProcessed?: string;
    query?: DryRunStatistics & {
      totalBytesProcessed?: string;
      totalBytesBilled?: string;
      totalSlotMs?: string;
      cacheHit?: boolean;
      numDmlAffectedRows?: string;
    };
  };
}

interface TableDataList {
  rows?: { f: { v: unknown }[] }[];
}

export interface BigQueryEngineOptions {
  /** The Cloud Storage bucket of exports (STORAGE_BACKEND=gcs); without one, exports fail. */
  exportBucket?: string;
  /** How often jobs.get asks whether a job is done. */
  pollMs?: number;
}

export async function openBigQueryQueryEngine(
  options: BigQueryOptions,
  engine: BigQueryEngineOptions = {},
): Promise<QueryEngine> {
  return new BigQueryQueryEngine(
    bigQueryClient(options),
    options,
    rememberingChecks(await openSandboxThread(), CHECK_CACHE),
    engine,
  );
}

class BigQueryQueryEngine implements QueryEngine {
  private resultsDataset: Promise<void> | undefined;

  constructor(
    private readonly client: BigQuery,
    private readonly options: BigQueryOptions,
    private readonly sandbox: Sandbox,
    private readonly engine: BigQueryEngineOptions,
  ) {}

  private readonly physical = (ref: TableRef) => ({ project: this.options.projectId, ...physicalNames(ref) });

  async run(request: QueryRequest): Promise<QueryOutcome> {
    const scrub = (message: string) => scrubbed(message, request.catalog);
    const prepared = await this.prepare(request, request.onTables);
    const dryRun = await this.dryRunStatistics(prepared.sql, scrub);
    const { readsMasked, readsRuled } = checkRuled(checkDryRun(dryRun, request.catalog, this.physical), prepared);
    const fields = dryRun.schema?.fields ?? [];
    const masked = privateColumns(fields, prepared.lineage, readsMasked);
    const columns: ResultColumn[] = fields.map((field, i) => ({
      name: field.name,
      type: googleSqlType(field),
      private: masked[i]!,
    }));
    if (request.signal.aborted) throw new QueryFailure('stopped', 'The job was stopped before it started');
    const withheld = (_message: string, reason?: string) => withheldMessage(`BigQuery ${reason ?? 'error'}`);
    await this.ensureResultsDataset();
    const destinationTable = this.resultTable(request.jobId);
    const anyPrivate = columns.some((column) => column.private);
    const job = await this.runJob(
      `collab_query_${request.jobId.replaceAll('-', '_')}`,
      {
        query: {
          query: anyPrivate ? maskingSql(prepared.sql, columns) : prepared.sql,
          useLegacySql: false,
          destinationTable,
          writeDisposition: 'WRITE_TRUNCATE',
          createDisposition: 'CREATE_IF_NEEDED',
          // BigQuery refuses a query over it before running it, and bills nothing (bytesBilledLimitExceeded).
          ...(request.maximumBytesBilled === undefined ? {} : { maximumBytesBilled: String(request.maximumBytesBilled) }),
        },
      },
      request.signal,
      // BigQuery's message may carry the value a query failed on (a row, a group the threshold drops): only
      // its reason, for a job that reads masked tables or tables with an aggregation rule.
      readsMasked || readsRuled ? withheld : scrub,
    );
    const usage = usageOf(job)!;
    // Stopped after the query itself ran: it is the query that BigQuery bills.
    const billedAnyway = (error: unknown) => {
      if (error instanceof QueryFailure && error.reason === 'stopped') throw new QueryFailure('stopped', error.message, usage);
      throw error;
    };
    const privateRowCount = anyPrivate
      ? await this.takeMaskedRowCount(job, destinationTable, request.signal, scrub).catch(billedAnyway)
      : 0;
    const suppressedRowCount = prepared.suppressedSql
      ? await this.count(`${job.jobReference.jobId}_suppressed`, prepared.suppressedSql, request.signal, withheld).catch(
          billedAnyway,
        )
      : 0;
    const table = await call('read the stored result', () =>
      restCall<{ numRows?: string }>(this.client, { uri: tablePath(destinationTable) }),
    );
    const query = job.statistics?.query ?? {};
    return {
      columns,
      totalRows: Number(table.numRows ?? 0),
      privateRowCount,
      suppressedRowCount,
      ...usage,
      elapsedMs: Number(query.totalSlotMs ?? 0),
      cacheHit: query.cacheHit === true,
      numDmlAffectedRows: query.numDmlAffectedRows === undefined ? null : Number(query.numDmlAffectedRows),
      destinationTable: {
        project_id: destinationTable.projectId,
        dataset_id: destinationTable.datasetId,
        table_id: destinationTable.tableId,
      },
      statistics: jobStatistics(job.statistics),
    };
  }

  async readRows(
    jobId: string,
    columns: ResultColumn[],
    range: { offset: number; limit: number },
  ): Promise<Record<string, unknown>[]> {
    const types = columns.map((column) => parseType(column.type));
    const rows: Record<string, unknown>[] = [];
    try {
      // tabledata.list answers fewer rows than asked for when they are large: ask again from where it stopped.
      while (rows.length < range.limit) {
        const page = await restCall<TableDataList>(this.client, {
          uri: `${tablePath(this.resultTable(jobId))}/data`,
          qs: {
            startIndex: String(range.offset + rows.length),
            maxResults: range.limit - rows.length,
            'formatOptions.useInt64Timestamp': true,
          },
        });
        if (!page.rows?.length) break;
        for (const row of page.rows) {
          rows.push(Object.fromEntries(columns.map((column, i) => [column.name, jsonValue(row.f[i]?.v, types[i]!)])));
        }
      }
    } catch (error) {
      throw new UpstreamError('Warehouse error: the stored result of this job cannot be read', { cause: error });
    }
    return rows;
  }

  resultSchema(columns: ResultColumn[]): { name: string; type: string }[] {
    // Already GoogleSQL's names (googleSqlType of the dry run's schema).
    return columns.map((column) => ({ name: column.name, type: column.type }));
  }

  async dropResult(jobId: string): Promise<void> {
    const { datasetId, tableId } = this.resultTable(jobId);
    await ignoring(
      404,
      call('delete the stored result', () => this.client.dataset(datasetId).table(tableId).delete()),
    );
  }

  async exportResult(
    jobId: string,
    _columns: ResultColumn[],
    options: { format: ExportFormat; compression: ExportCompression; key: string },
  ): Promise<'object-storage'> {
    const bucket = this.engine.exportBucket;
    if (!bucket) {
      throw new QueryFailure(
        'unsupported',
        'On the BigQuery warehouse, BigQuery writes exports into Cloud Storage itself: run with STORAGE_BACKEND=gcs',
      );
    }
    const settings = extractSettings(options.format, options.compression);
    await this.runJob(
      `collab_export_${createHash('sha256').update(options.key).digest('hex').slice(0, 40)}`,
      {
        extract: {
          sourceTable: this.resultTable(jobId),
          destinationUris: [`gs://${bucket}/${options.key}`],
          ...settings,
          ...(options.format === 'CSV' ? { printHeader: true } : {}),
          ...(options.format === 'AVRO' ? { useAvroLogicalTypes: true } : {}),
        },
      },
      new AbortController().signal,
      (message) => scrubbed(message, new Map()),
    );
    return 'object-storage';
  }

  close(): Promise<void> {
    return this.sandbox.close();
  }

  async dryRun(request: Pick<QueryRequest, 'sql' | 'catalog' | 'signal'>): Promise<QueryEstimate> {
    const prepared = await this.prepare(request);
    const statistics = await this.dryRunStatistics(prepared.sql, (message) => scrubbed(message, request.catalog));
    checkRuled(checkDryRun(statistics, request.catalog, this.physical), prepared);
    const processed = Number(statistics.totalBytesProcessed ?? 0);
    // A dry run tells the bytes, not how they split between tables: each referenced table counts its minimum.
    const perTable = prepared.referenced.map((_, i) => (i === 0 ? processed : 0));
    return { bytesProcessed: processed, bytesBilled: billedBytes(perTable), referenced: prepared.referenced };
  }

  /**
   * The statement BigQuery is to run: its tables rewritten to physical names (googlesql.ts). When
   * it reads another tenant's table with private columns or an aggregation rule, DuckDB's sandbox
   * checks the analysis rules on the same text first (rules.ts; a text DuckDB cannot read, or reads
   * otherwise than GoogleSQL, is refused), and the threshold goes into its HAVING; its lineage then
   * decides which columns are private. `onTables` hears the tables it names before any refusal.
   */
  private async prepare(
    request: Pick<QueryRequest, 'sql' | 'catalog'>,
    onTables?: QueryRequest['onTables'],
  ): Promise<{
    sql: string;
    referenced: string[];
    lineage?: { masked: boolean[]; names: string[] };
    suppressedSql?: string;
  }> {
    const { catalog } = request;
    const rewritten = rewriteTables(request.sql, catalog, this.physical);
    await onTables?.(rewritten.tables);
    const governed = rewritten.tables.some((key) => {
      const table = catalog.get(key);
      return table && (table.shared?.aggregation || table.columns.some((column) => column.masked));
    });
    // Nothing is private, and no rule applies.
    if (!governed) return { sql: rewritten.sql, referenced: rewritten.tables };
    const text = commonText(request.sql);
    const checked = await this.sandbox.check(text, catalog, { names: true }).catch((error: unknown) => {
      const reason = error instanceof Error ? scrubbed(error.message, catalog) : 'it could not be read';
      throw new QueryFailure(
        'accessDenied',
        `This query reads a table of another tenant with analysis rules, which are checked by reading it as DuckDB's SQL, and DuckDB cannot check it (${reason}): it is refused. Write it without GoogleSQL-only syntax (backticks, * EXCEPT, ...)`,
      );
    });
    if (checked.refusal) throw new QueryFailure('accessDenied', checked.refusal);
    const names = checked.names ?? [];
    const lineage = { masked: resultPrivacy(checked, names.length), names };
    const sql = rewriteTables(text, catalog, this.physical).sql;
    if (!checked.threshold) return { sql, referenced: rewritten.tables, lineage };
    // A reference without an alias goes by its table's name: on BigQuery, the physical one.
    const expression = thresholdSql(checked.threshold, {
      quote: backticked,
      qualifier: (unit) => backticked(unit.unaliased ? physicalNames(catalog.get(unit.key)!.ref).table : unit.alias),
    });
    return { ...withThreshold(sql, expression), referenced: rewritten.tables, lineage };
  }

  /** The dry run's statistics; BigQuery's refusal of the text (invalidQuery, notFound, ...) fails the job. */
  private async dryRunStatistics(sql: string, scrub: (message: string) => string): Promise<DryRunStatistics> {
    try {
      const job = await this.insertJob(undefined, { dryRun: true, query: { query: sql, useLegacySql: false } });
      return job.statistics?.query ?? {};
    } catch (error) {
      const { code, errors, message } = error as { code?: unknown; errors?: { message?: string }[]; message?: string };
      if (typeof code === 'number' && code >= 400 && code < 500 && code !== 429) {
        throw new QueryFailure('invalidQuery', scrub(errors?.[0]?.message ?? message ?? 'The query is not valid'));
      }
      throw toUpstreamError('check the query', error);
    }
  }

  /** private_row_count from the stored flag, which is then dropped (ALTER TABLE ... DROP COLUMN costs nothing). */
  private async takeMaskedRowCount(
    job: JobResource,
    table: BigQueryTableReference,
    signal: AbortSignal,
    scrub: (message: string) => string,
  ): Promise<number> {
    const name = `\`${table.projectId}.${table.datasetId}.${table.tableId}\``;
    const count = await this.count(
      `${job.jobReference.jobId}_count`,
      `SELECT COUNT(*) AS n FROM ${name} WHERE ${MASKED_ROW}`,
      signal,
      scrub,
    );
    await this.runJob(
      `${job.jobReference.jobId}_drop`,
      { query: { query: `ALTER TABLE ${name} DROP COLUMN IF EXISTS ${MASKED_ROW}`, useLegacySql: false } },
      signal,
      scrub,
    );
    return count;
  }

  /** The one number a COUNT query job under `jobId` answers. */
  private async count(
    jobId: string,
    sql: string,
    signal: AbortSignal,
    scrub: (message: string, reason?: string) => string,
  ): Promise<number> {
    const job = await this.runJob(jobId, { query: { query: sql, useLegacySql: false } }, signal, scrub);
    const answer = await call('read a count', () =>
      restCall<TableDataList>(this.client, {
        uri: `/queries/${job.jobReference.jobId}`,
        qs: { location: job.jobReference.location ?? this.options.location },
      }),
    );
    return Number(answer.rows?.[0]?.f[0]?.v ?? 0);
  }

  /**
   * Runs a job under `baseId` to its end: an id already used (409) is that job, followed rather
   * than run again; one an earlier attempt cancelled gives way to the next id.
   */
  private async runJob(
    baseId: string,
    configuration: Record<string, unknown>,
    signal: AbortSignal,
    scrub: (message: string, reason?: string) => string,
  ): Promise<JobResource> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      const jobId = attempt === 1 ? baseId : `${baseId}_${attempt}`;
      const job = await this.untilDone(await this.insertOrFollow(jobId, configuration), signal);
      const error = job.status?.errorResult;
      if (error?.reason === 'stopped') continue;
      if (error) {
        const message = scrub(error.message ?? error.reason ?? 'BigQuery failed the job', error.reason);
        throw new QueryFailure(PASSED_ON_REASONS.find((reason) => reason === error.reason) ?? 'invalidQuery', message);
      }
      return job;
    }
    throw new QueryFailure('stopped', `The job was stopped ${MAX_ATTEMPTS} times before it finished`);
  }

  private async insertOrFollow(jobId: string, configuration: Record<string, unknown>): Promise<JobResource> {
    try {
      return await this.insertJob(jobId, configuration);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 409) {
        throw toUpstreamError('start the job', error);
      }
      return this.getJob(jobId);
    }
  }

  private insertJob(jobId: string | undefined, configuration: Record<string, unknown>): Promise<JobResource> {
    return restCall<JobResource>(this.client, {
      method: 'POST',
      uri: '/jobs',
      json: {
        jobReference: { projectId: this.options.projectId, location: this.options.location, ...(jobId ? { jobId } : {}) },
        configuration,
      },
    });
  }

  private getJob(jobId: string): Promise<JobResource> {
    return call('read the query job', () =>
      restCall<JobResource>(this.client, { uri: `/jobs/${jobId}`, qs: { location: this.options.location } }),
    );
  }

  /** jobs.get until DONE; on abort, jobs.cancel and QueryFailure('stopped') with what the cancelled job was billed. */
  private async untilDone(first: JobResource, signal: AbortSignal): Promise<JobResource> {
    const { jobId } = first.jobReference;
    let job = first;
    while (job.status?.state !== 'DONE') {
      if (signal.aborted) {
        const cancelled = await this.cancelJob(jobId).catch(() => undefined);
        throw new QueryFailure('stopped', 'The job was stopped before it finished', cancelled && usageOf(cancelled));
      }
      await sleep(this.engine.pollMs ?? 500, undefined, { signal }).catch(() => undefined);
      if (!signal.aborted) job = await this.getJob(jobId);
    }
    return job;
  }

  /** jobs.cancel, then the job as it ended (DONE), or as it last was after READS_AFTER_CANCEL reads. */
  private async cancelJob(jobId: string): Promise<JobResource> {
    const answer = await call('cancel the query job', () =>
      restCall<{ job?: JobResource }>(this.client, {
        method: 'POST',
        uri: `/jobs/${jobId}/cancel`,
        qs: { location: this.options.location },
      }),
    );
    let job = answer.job ?? (await this.getJob(jobId));
    for (let read = 1; job.status?.state !== 'DONE' && read < READS_AFTER_CANCEL; read += 1) {
      await sleep(this.engine.pollMs ?? 500);
      job = await this.getJob(jobId);
    }
    return job;
  }

  /** Made once per process; already there (409) is made. */
  private ensureResultsDataset(): Promise<void> {
    this.resultsDataset ??= ignoring(
      409,
      call('create the results dataset', () =>
        restCall(this.client, {
          method: 'POST',
          uri: '/datasets',
          json: {
            datasetReference: { projectId: this.options.projectId, datasetId: RESULTS_DATASET },
            location: this.options.location,
          },
        }),
      ),
    ).catch((error: unknown) => {
      this.resultsDataset = undefined;
      throw error;
    });
    return this.resultsDataset;
  }

  private resultTable(jobId: string): BigQueryTableReference {
    return { projectId: this.options.projectId, datasetId: RESULTS_DATASET, tableId: `r_${jobId.replaceAll('-', '_')}` };
  }
}

/**
 * The dry run's tables are the authority: one with analysis rules that the text's rewrite did not
 * name (a physical name written under a CTE's, say) was never checked, and refuses the query.
 */
function checkRuled<T extends { readsRuled: boolean }>(dryRun: T, prepared: { lineage?: unknown }): T {
  if (dryRun.readsRuled && !prepared.lineage) {
    throw new QueryFailure(
      'accessDenied',
      'This query reads a table of another tenant with analysis rules that its text does not name as dataset_name.table_name, so the rules could not be checked: it is refused',
    );
  }
  return dryRun;
}

/** What BigQuery counted for a query job: processed and billed (its totalBytesBilled); none before it counted anything. */
function usageOf(job: JobResource): QueryUsage | undefined {
  const query = job.statistics?.query;
  const processed = query?.totalBytesProcessed ?? job.statistics?.totalBytesProcessed;
  if (processed === undefined) return undefined;
  return { bytesProcessed: Number(processed), bytesBilled: Number(query?.totalBytesBilled ?? processed) };
}

function backticked(name: string): string {
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}

function tablePath(table: BigQueryTableReference): string {
  return `/datasets/${table.datasetId}/tables/${table.tableId}`;
}

// A stored result's table, as BigQuery's messages name it.
const RESULT_TABLE = /(?:[\w.-]+[:.])?(?:collab_results\.)?r_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12}/gi;

/** BigQuery's message with readable tables named as the caller names them, and no other physical name. */
function scrubbed(message: string, catalog: ReadableCatalog): string {
  let text = message.split('\n')[0]!;
  for (const [key, table] of catalog) {
    if (!table) continue;
    const { dataset, table: name } = physicalNames(table.ref);
    text = text.replace(new RegExp(`(?:[\\w.-]+[:.])?${dataset}\\.${name}`, 'gi'), key);
  }
  return withoutPhysicalNames(text).replace(RESULT_TABLE, '<result>');
}
