/**
 * A loopback server that speaks the part of the BigQuery REST API v2 the warehouse calls
 * (datasets.insert/list/patch/delete, tables.insert/list/get/patch/delete, load jobs) and query
 * jobs call (jobs.insert of query and extract jobs, dry runs included; jobs.get/cancel;
 * getQueryResults; tabledata.list). It checks request bodies as BigQuery documents them, enforces
 * BigQuery's rules for schema patches, pages lists with `pageToken`/`nextPageToken` (PAGE_SIZE
 * items a page unless `maxResults` says fewer), and answers failures with BigQuery's error body
 * `{ error: { code, message, errors: [{ reason, message }] } }`.
 *
 * Queries run on an in-memory DuckDB that holds the tables (fill them with `fill`), after
 * googleSqlToDuckDb's mapping. Its limits: backtick names, `* EXCEPT (...)`, CAST's scalar type
 * names and single-quoted strings are mapped; double-quoted strings, triple-quoted and raw strings,
 * and GoogleSQL functions DuckDB lacks are not. Bytes processed are 8 for every value of every
 * column of each referenced table; result names are DuckDB's where they are identifiers, `f<i>_`
 * otherwise (as BigQuery names anonymous columns). totalBytesBilled is BigQuery's on-demand
 * billing of those bytes: each referenced table at least 10 MB (2^20 bytes a MB), the query at
 * least 10 MB, rounded up to a whole MB; a query job whose maximumBytesBilled is less fails
 * `bytesBilledLimitExceeded` without running, as BigQuery's does. A query job cancelled while RUNNING (jobs.cancel) ends DONE
 * with errorResult `stopped` and the statistics of having read its tables (BigQuery bills a
 * cancelled job for what it processed; the fake has read them all by then). Extract jobs write into
 * the fake Cloud Storage bucket's objects (its `objects` map), as BigQuery writes into a bucket.
 */
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import avsc from 'avsc';
import { bigLong } from '../../src/adapters/warehouse/avro-long.js';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  authorization: string | undefined;
}

interface SchemaField {
  name: string;
  type: string;
  mode?: string;
  description?: string;
}

interface TableResource {
  tableReference: { projectId: string; datasetId: string; tableId: string };
  schema: { fields: SchemaField[] };
  description?: string | null;
  friendlyName?: string;
  labels?: Record<string, string>;
  numRows: string;
  streamingBuffer?: { estimatedRows: string };
}

interface DatasetResource {
  datasetReference: { projectId: string; datasetId: string };
  location: string;
  description?: string | null;
  friendlyName?: string;
  labels?: Record<string, string>;
}

interface LoadConfiguration {
  sourceUris?: string[];
  sourceFormat?: string;
  destinationTable: { projectId: string; datasetId: string; tableId: string };
  writeDisposition?: string;
  autodetect?: boolean;
  schema?: { fields: SchemaField[] };
  [option: string]: unknown;
}

type LoadOutcome =
  { rows: number; detected?: SchemaField[] } | { errors: { reason: string; message: string; location?: string }[] };

interface TableReference {
  projectId: string;
  datasetId: string;
  tableId: string;
}

interface QueryConfiguration {
  query: string;
  useLegacySql?: boolean;
  destinationTable?: TableReference;
  writeDisposition?: string;
  createDisposition?: string;
  /** An int64 as a string of digits; a query that would be billed more fails bytesBilledLimitExceeded without running. */
  maximumBytesBilled?: string;
}

interface ExtractConfiguration {
  sourceTable: TableReference;
  destinationUris: string[];
  destinationFormat?: string;
  compression?: string;
  printHeader?: boolean;
  useAvroLogicalTypes?: boolean;
}

interface JobResource {
  kind: 'bigquery#job';
  id: string;
  jobReference: { projectId: string; jobId: string; location: string };
  configuration: { load?: LoadConfiguration; query?: QueryConfiguration; extract?: ExtractConfiguration };
  status: {
    state: 'RUNNING' | 'DONE';
    errorResult?: { reason: string; message: string };
    errors?: { reason: string; message: string }[];
  };
  statistics?: Record<string, unknown>;
  outcome?: LoadOutcome;
  /** A query without a destination table: its rows, for getQueryResults. */
  result?: { schema: { fields: SchemaField[] }; rows: { f: { v: unknown }[] }[] };
}

/** A bucket of the fake Cloud Storage server (packages/storage/test/fake-gcs.ts). */
export interface FakeBucket {
  name: string;
  objects: Map<string, { data: Buffer; contentType: string }>;
}

const LOAD_FORMATS = new Set(['CSV', 'NEWLINE_DELIMITED_JSON', 'AVRO', 'PARQUET', 'ORC']);
// Extract formats and the compressions BigQuery documents for each.
const EXTRACT_COMPRESSIONS: Record<string, string[]> = {
  CSV: ['GZIP', 'NONE'],
  NEWLINE_DELIMITED_JSON: ['GZIP', 'NONE'],
  AVRO: ['DEFLATE', 'SNAPPY', 'NONE'],
  PARQUET: ['GZIP', 'SNAPPY', 'ZSTD', 'NONE'],
};
const WRITE_DISPOSITIONS = new Set(['WRITE_TRUNCATE', 'WRITE_APPEND', 'WRITE_EMPTY']);
const CREATE_DISPOSITIONS = new Set(['CREATE_IF_NEEDED', 'CREATE_NEVER']);
// Small, so that tests read a page of results in more than one tabledata.list call.
const TABLEDATA_PAGE = 7;

class BigQueryFailure extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

// Standard SQL names and their legacy aliases, as tables.insert accepts them.
const TYPES = new Set(
  'STRING BYTES INTEGER INT64 FLOAT FLOAT64 NUMERIC BOOLEAN BOOL TIMESTAMP DATE TIME DATETIME JSON'.split(' '),
);
const MODES = new Set(['NULLABLE', 'REQUIRED', 'REPEATED']);
const FIELD_KEYS = new Set(['name', 'type', 'mode', 'description']);
const ID = /^[A-Za-z0-9_]{1,1024}$/;
// Small, so that tests list more than one page.
const PAGE_SIZE = 3;

export async function startFakeBigQuery(project: string, options: { bucket?: FakeBucket } = {}) {
  const duck = await DuckDBInstance.create(':memory:');
  const sql = await duck.connect();
  const folder = await mkdtemp(path.join(os.tmpdir(), 'fake-bigquery-'));
  /** Tables made in DuckDB, by `dataset.table`. */
  const inDuckDb = new Set<string>();
  /** Statements the fake ran for query jobs (not dry runs), as it received them. */
  const executed: string[] = [];
  let holding = false;
  const datasets = new Map<string, DatasetResource>();
  const tables = new Map<string, TableResource>();
  const requests: RecordedRequest[] = [];
  let nextFailure: BigQueryFailure | undefined;
  const jobs = new Map<string, JobResource>();
  /** What the next load job does: load this many rows (and, with autodetect, give the table these columns), or fail. */
  let loadOutcome: LoadOutcome = { rows: 0 };

  function dataset(id: string): DatasetResource {
    const found = datasets.get(id);
    if (!found) throw new BigQueryFailure(404, 'notFound', `Not found: Dataset ${project}:${id}`);
    return found;
  }

  function table(datasetId: string, tableId: string): TableResource {
    dataset(datasetId);
    const found = tables.get(`${datasetId}.${tableId}`);
    if (!found) throw new BigQueryFailure(404, 'notFound', `Not found: Table ${project}:${datasetId}.${tableId}`);
    return found;
  }

  async function handle(
    method: string,
    segments: string[],
    query: Record<string, string>,
    body: Record<string, unknown>,
  ): Promise<unknown> {
    if (segments[0] === 'jobs' && segments[1] === undefined && method === 'POST' && !isLoad(body)) {
      return insertQueryOrExtract(body);
    }
    if (segments[0] === 'jobs') return handleJob(method, segments[1], segments[2], body);
    if (segments[0] === 'queries' && segments[1] !== undefined && method === 'GET') return queryResults(segments[1]);
    if (segments[0] === 'datasets' && segments[4] === 'data' && method === 'GET') {
      return tableData(table(segments[1]!, segments[3]!), query);
    }
    const [datasetsWord, datasetId, tablesWord, tableId] = segments;
    if (datasetsWord !== 'datasets') throw new BigQueryFailure(404, 'notFound', 'Unknown path');
    if (datasetId === undefined && method === 'POST') return insertDataset(body);
    if (datasetId === undefined && method === 'GET') {
      return page(query, [...datasets.values()], (items, nextPageToken) => ({
        kind: 'bigquery#datasetList',
        ...(items.length > 0 && {
          datasets: items.map((resource) => ({
            kind: 'bigquery#dataset',
            id: `${project}:${resource.datasetReference.datasetId}`,
            ...pick(resource as unknown as Record<string, unknown>, ['datasetReference', 'location', 'friendlyName', 'labels']),
          })),
        }),
        ...(nextPageToken && { nextPageToken }),
      }));
    }
    if (datasetId !== undefined && tablesWord === undefined) {
      if (method === 'PATCH') return Object.assign(dataset(datasetId), pick(body, ['description', 'friendlyName', 'labels']));
      if (method === 'DELETE') return deleteDataset(datasetId, query.deleteContents === 'true');
    }
    if (datasetId !== undefined && tablesWord === 'tables') {
      if (tableId === undefined && method === 'POST') return insertTable(datasetId, body);
      if (tableId === undefined && method === 'GET') {
        dataset(datasetId);
        const own = [...tables.values()].filter((resource) => resource.tableReference.datasetId === datasetId);
        return page(query, own, (items, nextPageToken) => ({
          kind: 'bigquery#tableList',
          totalItems: own.length,
          ...(items.length > 0 && {
            tables: items.map((resource) => ({
              kind: 'bigquery#table',
              id: `${project}:${datasetId}.${resource.tableReference.tableId}`,
              tableReference: resource.tableReference,
              type: 'TABLE',
            })),
          }),
          ...(nextPageToken && { nextPageToken }),
        }));
      }
      if (tableId !== undefined && method === 'GET') return table(datasetId, tableId);
      if (tableId !== undefined && method === 'PATCH') return patchTable(table(datasetId, tableId), body);
      if (tableId !== undefined && method === 'DELETE') {
        table(datasetId, tableId);
        tables.delete(`${datasetId}.${tableId}`);
        return undefined;
      }
    }
    throw new BigQueryFailure(404, 'notFound', `No method ${method} here`);
  }

  /**
   * jobs.insert of a load job (checked as BigQuery documents it; an id already used: 409), jobs.get
   * (RUNNING once, then DONE with the outcome applied to the table) and jobs.cancel.
   */
  async function handleJob(
    method: string,
    jobId: string | undefined,
    action: string | undefined,
    body: Record<string, unknown>,
  ): Promise<unknown> {
    if (jobId === undefined && method === 'POST') {
      const reference = body.jobReference as { jobId?: string; location?: string } | undefined;
      const load = (body.configuration as { load?: LoadConfiguration } | undefined)?.load;
      if (!reference?.jobId || !ID.test(reference.jobId.replaceAll('-', '_')))
        throw new BigQueryFailure(400, 'invalid', 'Invalid job ID');
      if (!load) throw new BigQueryFailure(400, 'invalid', 'Only load jobs are faked');
      if (jobs.has(reference.jobId))
        throw new BigQueryFailure(409, 'duplicate', `Already Exists: Job ${project}:${reference.jobId}`);
      if (!load.sourceUris?.every((uri) => uri.startsWith('gs://')))
        throw new BigQueryFailure(400, 'invalid', 'Source URIs must be gs://');
      if (!LOAD_FORMATS.has(load.sourceFormat ?? ''))
        throw new BigQueryFailure(400, 'invalid', `Bad sourceFormat ${load.sourceFormat}`);
      table(load.destinationTable.datasetId, load.destinationTable.tableId);
      const job: JobResource = {
        kind: 'bigquery#job',
        id: `${project}:${reference.jobId}`,
        jobReference: { projectId: project, jobId: reference.jobId, location: reference.location ?? 'US' },
        configuration: { load },
        status: { state: 'RUNNING' },
        outcome: loadOutcome,
      };
      jobs.set(reference.jobId, job);
      return view(job);
    }
    const job = jobId === undefined ? undefined : jobs.get(jobId);
    if (!job) throw new BigQueryFailure(404, 'notFound', `Not found: Job ${project}:${jobId}`);
    if (method === 'POST' && action === 'cancel') {
      if (job.status.state === 'RUNNING') {
        job.status = {
          state: 'DONE',
          errorResult: { reason: 'stopped', message: 'Job execution was cancelled: User requested cancellation' },
        };
        if (job.configuration.query) {
          const { bytes, billed } = await analyze(job.configuration.query.query);
          const processed = String(bytes ?? 0);
          job.statistics = {
            totalBytesProcessed: processed,
            query: { totalBytesProcessed: processed, totalBytesBilled: String(billed ?? onDemandBilled([])) },
          };
        }
      }
      return { kind: 'bigquery#jobCancelResponse', job: view(job) };
    }
    if (method === 'GET' && action === undefined) {
      if (job.status.state === 'RUNNING' && !holding) await finish(job);
      return view(job);
    }
    throw new BigQueryFailure(404, 'notFound', `No method ${method} here`);
  }

  async function finish(job: JobResource): Promise<void> {
    try {
      if (job.configuration.query) await runQuery(job, job.configuration.query);
      else if (job.configuration.extract) await runExtract(job, job.configuration.extract);
      else finishJob(job);
    } catch (error) {
      if (!(error instanceof BigQueryFailure)) throw error;
      const failure = { reason: error.reason, message: error.message };
      job.status = { state: 'DONE', errorResult: failure, errors: [failure] };
    }
  }

  function finishJob(job: JobResource): void {
    const load = job.configuration.load!;
    const target = table(load.destinationTable.datasetId, load.destinationTable.tableId);
    const outcome = job.outcome!;
    if ('errors' in outcome) {
      job.status = { state: 'DONE', errorResult: outcome.errors[0], errors: outcome.errors };
      return;
    }
    const before = load.writeDisposition === 'WRITE_TRUNCATE' ? 0 : Number(target.numRows);
    if (load.writeDisposition === 'WRITE_EMPTY' && before > 0) {
      const error = {
        reason: 'duplicate',
        message: `Already Exists: Table ${project}:${load.destinationTable.datasetId}.${load.destinationTable.tableId}`,
      };
      job.status = { state: 'DONE', errorResult: error, errors: [error] };
      return;
    }
    target.numRows = String(before + outcome.rows);
    if (load.autodetect && outcome.detected) target.schema = { fields: outcome.detected };
    job.status = { state: 'DONE' };
    job.statistics = { load: { outputRows: String(outcome.rows), inputFileBytes: String(outcome.rows * 10) } };
  }

  function view(job: JobResource): Omit<JobResource, 'outcome' | 'result'> {
    const { outcome: _, result: __, ...visible } = job;
    return visible;
  }

  /** The table in DuckDB, made from its BigQuery schema the first time a statement needs it. */
  async function ensureInDuckDb(resource: TableResource): Promise<string> {
    const { datasetId, tableId } = resource.tableReference;
    const name = `"${datasetId}"."${tableId}"`;
    if (inDuckDb.has(`${datasetId}.${tableId}`)) return name;
    const columns = resource.schema.fields.map((field) => `"${field.name}" ${duckDbType(field)}`);
    await sql.run(`CREATE SCHEMA IF NOT EXISTS "${datasetId}"`);
    await sql.run(`CREATE OR REPLACE TABLE ${name} (${columns.join(', ')})`);
    inDuckDb.add(`${datasetId}.${tableId}`);
    return name;
  }

  /** What a dry run reports of a statement: its type, the tables it reads and, for a SELECT, its result's columns. */
  async function analyze(text: string) {
    const duckSql = googleSqlToDuckDb(text, project);
    const statements = await sql.extractStatements(duckSql).catch((error: unknown) => {
      throw new BigQueryFailure(400, 'invalidQuery', `Syntax error: ${firstLine(error)}`);
    });
    if (statements.count > 1) return { statementType: 'SCRIPT', referencedTables: [], duckSql };
    const keyword = /^\s*\(*\s*(\w+)(?:\s+(\w+))?/.exec(duckSql);
    const first = keyword?.[1]?.toUpperCase() ?? '';
    if (first !== 'SELECT' && first !== 'WITH') {
      const statementType =
        first === 'ALTER' || first === 'CREATE' || first === 'DROP' ? `${first}_${keyword?.[2]?.toUpperCase()}` : first;
      return { statementType, referencedTables: [], duckSql };
    }
    const tree = JSON.parse(
      String((await sql.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [duckSql])).getRows()[0]![0]),
    ) as { error: boolean; error_message?: string };
    if (tree.error) throw new BigQueryFailure(400, 'invalidQuery', `Syntax error: ${tree.error_message}`);
    const referenced = new Map<string, TableReference>();
    collectTables(tree, (datasetId, tableId) =>
      referenced.set(`${datasetId}.${tableId}`, { projectId: project, datasetId, tableId }),
    );
    for (const reference of referenced.values()) {
      const resource = tables.get(`${reference.datasetId}.${reference.tableId}`);
      if (!resource) {
        throw new BigQueryFailure(
          404,
          'notFound',
          `Not found: Table ${project}:${reference.datasetId}.${reference.tableId} was not found in location US`,
        );
      }
      await ensureInDuckDb(resource);
    }
    let prepared;
    try {
      prepared = await sql.prepare(duckSql);
    } catch (error) {
      throw new BigQueryFailure(400, 'invalidQuery', firstLine(error));
    }
    const fields: SchemaField[] = Array.from({ length: prepared.columnCount }, (_, i) => {
      const name = prepared.columnName(i);
      return bigQueryField(/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `f${i}_`, prepared.columnType(i).toString());
    });
    const seen = new Set<string>();
    for (const field of fields) {
      if (seen.has(field.name.toLowerCase())) {
        throw new BigQueryFailure(
          400,
          'invalidQuery',
          `Duplicate column names in the result are not supported. Found duplicate(s): ${field.name}`,
        );
      }
      seen.add(field.name.toLowerCase());
    }
    const perTable = [...referenced.values()].map((reference) => {
      const resource = tables.get(`${reference.datasetId}.${reference.tableId}`)!;
      return Number(resource.numRows) * resource.schema.fields.length * 8;
    });
    const bytes = perTable.reduce((sum, tableBytes) => sum + tableBytes, 0);
    return {
      statementType: 'SELECT',
      referencedTables: [...referenced.values()],
      schema: { fields },
      bytes,
      billed: onDemandBilled(perTable),
      duckSql,
    };
  }

  /** jobs.insert of a query job (a dry run answers at once and keeps nothing) or an extract job. */
  async function insertQueryOrExtract(body: Record<string, unknown>): Promise<unknown> {
    const configuration = (body.configuration ?? {}) as {
      dryRun?: boolean;
      query?: QueryConfiguration;
      extract?: ExtractConfiguration;
    };
    const reference = body.jobReference as { jobId?: string; location?: string; projectId?: string } | undefined;
    if (reference?.projectId !== undefined && reference.projectId !== project)
      throw new BigQueryFailure(400, 'invalid', 'Wrong project');
    const { query, extract } = configuration;
    if (query) {
      if (typeof query.query !== 'string' || query.query.trim() === '')
        throw new BigQueryFailure(400, 'invalid', 'Query is required');
      // The API's default is legacy SQL, which the fake does not speak.
      if (query.useLegacySql !== false)
        throw new BigQueryFailure(400, 'invalidQuery', 'Legacy SQL is not faked: set useLegacySql false');
      if (query.writeDisposition !== undefined && !WRITE_DISPOSITIONS.has(query.writeDisposition))
        throw new BigQueryFailure(400, 'invalid', `Invalid writeDisposition ${query.writeDisposition}`);
      if (query.createDisposition !== undefined && !CREATE_DISPOSITIONS.has(query.createDisposition))
        throw new BigQueryFailure(400, 'invalid', `Invalid createDisposition ${query.createDisposition}`);
      if (query.maximumBytesBilled !== undefined && !/^[0-9]+$/.test(String(query.maximumBytesBilled)))
        throw new BigQueryFailure(400, 'invalid', `Invalid maximumBytesBilled ${String(query.maximumBytesBilled)}`);
      if (query.destinationTable) {
        if (query.destinationTable.projectId !== project) throw new BigQueryFailure(400, 'invalid', 'Wrong destination project');
        dataset(query.destinationTable.datasetId);
      }
    } else if (extract) {
      const format = extract.destinationFormat ?? 'CSV';
      if (!EXTRACT_COMPRESSIONS[format]) throw new BigQueryFailure(400, 'invalid', `Invalid destinationFormat ${format}`);
      if (!EXTRACT_COMPRESSIONS[format].includes(extract.compression ?? 'NONE')) {
        throw new BigQueryFailure(400, 'invalid', `Compression ${extract.compression} is not supported for ${format}`);
      }
      const bucket = options.bucket?.name;
      if (extract.destinationUris?.length !== 1 || !extract.destinationUris[0]!.startsWith(`gs://${bucket}/`)) {
        throw new BigQueryFailure(400, 'invalid', 'destinationUris must name one object of the bucket');
      }
    } else {
      throw new BigQueryFailure(400, 'invalid', 'Only load, query and extract jobs are faked');
    }
    if (configuration.dryRun) {
      if (!query) throw new BigQueryFailure(400, 'invalid', 'Only queries have dry runs');
      const { duckSql: _, bytes, billed: __, ...statistics } = await analyze(query.query);
      return {
        kind: 'bigquery#job',
        jobReference: { projectId: project, location: reference?.location ?? 'US' },
        configuration: body.configuration,
        status: { state: 'DONE' },
        statistics: {
          totalBytesProcessed: String(bytes ?? 0),
          query: { ...statistics, totalBytesProcessed: String(bytes ?? 0) },
        },
      };
    }
    if (!reference?.jobId || !ID.test(reference.jobId.replaceAll('-', '_')))
      throw new BigQueryFailure(400, 'invalid', 'Invalid job ID');
    if (jobs.has(reference.jobId))
      throw new BigQueryFailure(409, 'duplicate', `Already Exists: Job ${project}:${reference.jobId}`);
    const job: JobResource = {
      kind: 'bigquery#job',
      id: `${project}:${reference.jobId}`,
      jobReference: { projectId: project, jobId: reference.jobId, location: reference.location ?? 'US' },
      configuration: configuration,
      status: { state: 'RUNNING' },
    };
    jobs.set(reference.jobId, job);
    return view(job);
  }

  async function runQuery(job: JobResource, query: QueryConfiguration): Promise<void> {
    const analyzed = await analyze(query.query);
    const billed = analyzed.billed ?? onDemandBilled([]);
    // BigQuery refuses such a query before it runs, and bills nothing.
    if (query.maximumBytesBilled !== undefined && BigInt(billed) > BigInt(query.maximumBytesBilled)) {
      throw new BigQueryFailure(
        400,
        'bytesBilledLimitExceeded',
        `Query exceeded limit for bytes billed: ${query.maximumBytesBilled}. ${billed} or higher required.`,
      );
    }
    executed.push(query.query);
    const started = Date.now();
    if (analyzed.statementType === 'SELECT') {
      const names = analyzed.schema!.fields.map((field) => `"${field.name}"`).join(', ');
      const select = `SELECT * FROM (${analyzed.duckSql}) AS q(${names})`;
      // A query that fails while it runs ends as BigQuery's does: DONE, with an invalidQuery errorResult.
      const running = <T>(work: Promise<T>) =>
        work.catch((error: unknown) => {
          throw new BigQueryFailure(400, 'invalidQuery', firstLine(error));
        });
      if (query.destinationTable) {
        const { datasetId, tableId } = query.destinationTable;
        await sql.run(`CREATE SCHEMA IF NOT EXISTS "${datasetId}"`);
        await running(sql.run(`CREATE OR REPLACE TABLE "${datasetId}"."${tableId}" AS ${select}`));
        inDuckDb.add(`${datasetId}.${tableId}`);
        await describeTable(query.destinationTable);
      } else {
        const reader = await running(sql.runAndReadAll(select));
        job.result = {
          schema: analyzed.schema!,
          rows: reader.getRowsJson().map((row) => ({ f: row.map((v) => ({ v: cell(v) })) })),
        };
      }
    } else if (analyzed.statementType === 'ALTER_TABLE') {
      await sql.run(analyzed.duckSql);
      const target = /ALTER\s+TABLE\s+"([^"]+)"\."([^"]+)"/i.exec(analyzed.duckSql)!;
      await describeTable({ projectId: project, datasetId: target[1]!, tableId: target[2]! });
    } else {
      throw new BigQueryFailure(400, 'invalidQuery', `The fake runs SELECT and ALTER TABLE only, not ${analyzed.statementType}`);
    }
    const slotMs = String(Date.now() - started + 1);
    job.status = { state: 'DONE' };
    job.statistics = {
      creationTime: String(started),
      startTime: String(started),
      endTime: String(Date.now()),
      totalBytesProcessed: String(analyzed.bytes ?? 0),
      totalSlotMs: slotMs,
      query: {
        totalBytesProcessed: String(analyzed.bytes ?? 0),
        totalBytesBilled: String(analyzed.billed ?? onDemandBilled([])),
        totalSlotMs: slotMs,
        cacheHit: false,
        statementType: analyzed.statementType,
        referencedTables: analyzed.referencedTables,
        ...(analyzed.schema ? { schema: analyzed.schema } : {}),
        queryPlan: [{ name: 'S00: Output', id: '0', status: 'COMPLETE', recordsRead: '0', recordsWritten: '0' }],
        timeline: [{ elapsedMs: slotMs, totalSlotMs: slotMs, pendingUnits: '0', completedUnits: '1', activeUnits: '0' }],
      },
    };
  }

  /** The table resource of a table DuckDB holds, with BigQuery's schema and row count. */
  async function describeTable(reference: TableReference): Promise<void> {
    const name = `"${reference.datasetId}"."${reference.tableId}"`;
    const columns = (await sql.runAndReadAll(`DESCRIBE ${name}`)).getRowObjectsJS() as {
      column_name: string;
      column_type: string;
    }[];
    const count = (await sql.runAndReadAll(`SELECT count(*) FROM ${name}`)).getRows()[0]![0];
    tables.set(`${reference.datasetId}.${reference.tableId}`, {
      tableReference: { ...reference, projectId: project },
      schema: { fields: columns.map((column) => bigQueryField(column.column_name, column.column_type)) },
      numRows: String(count),
    });
  }

  async function runExtract(job: JobResource, extract: ExtractConfiguration): Promise<void> {
    const source = table(extract.sourceTable.datasetId, extract.sourceTable.tableId);
    const name = await ensureInDuckDb(source);
    const format = extract.destinationFormat ?? 'CSV';
    const gzip = extract.compression === 'GZIP';
    const file = path.join(folder, `${job.jobReference.jobId}.out`);
    const select = `SELECT * FROM ${name} ORDER BY rowid`;
    let data: Buffer;
    if (format === 'AVRO') {
      data = await avroFile(sql, select, source.schema.fields, extract.compression === 'DEFLATE');
    } else {
      const copy = {
        CSV: `FORMAT csv, HEADER ${extract.printHeader !== false}, COMPRESSION ${gzip ? 'gzip' : 'uncompressed'}`,
        NEWLINE_DELIMITED_JSON: `FORMAT json, COMPRESSION ${gzip ? 'gzip' : 'uncompressed'}`,
        PARQUET: `FORMAT parquet, COMPRESSION ${gzip ? 'gzip' : 'uncompressed'}`,
      }[format];
      await sql.run(`COPY (${select}) TO '${file}' (${copy})`);
      data = await readFile(file);
      await rm(file, { force: true });
    }
    const key = extract.destinationUris[0]!.slice(`gs://${options.bucket!.name}/`.length);
    options.bucket!.objects.set(key, { data, contentType: 'application/octet-stream' });
    job.status = { state: 'DONE' };
    job.statistics = { extract: { destinationUriFileCounts: ['1'], inputBytes: String(data.length) } };
  }

  /** getQueryResults of a query without a destination table. */
  function queryResults(jobId: string): unknown {
    const job = jobs.get(jobId);
    if (!job) throw new BigQueryFailure(404, 'notFound', `Not found: Job ${project}:${jobId}`);
    if (job.status.state !== 'DONE')
      return { kind: 'bigquery#getQueryResultsResponse', jobReference: job.jobReference, jobComplete: false };
    if (job.status.errorResult) throw new BigQueryFailure(400, job.status.errorResult.reason, job.status.errorResult.message);
    return {
      kind: 'bigquery#getQueryResultsResponse',
      jobReference: job.jobReference,
      jobComplete: true,
      schema: job.result?.schema,
      totalRows: String(job.result?.rows.length ?? 0),
      ...(job.result?.rows.length ? { rows: job.result.rows } : {}),
    };
  }

  /** tabledata.list: rows from `startIndex`, at most `maxResults` (and TABLEDATA_PAGE) of them, timestamps as microseconds. */
  async function tableData(resource: TableResource, query: Record<string, string>): Promise<unknown> {
    const start = Number(query.startIndex ?? 0);
    const max = Math.min(TABLEDATA_PAGE, Number(query.maxResults ?? TABLEDATA_PAGE));
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(max) || max < 0) {
      throw new BigQueryFailure(400, 'invalid', 'Invalid startIndex or maxResults');
    }
    if (query['formatOptions.useInt64Timestamp'] !== 'true')
      throw new BigQueryFailure(400, 'invalid', 'The fake answers int64 timestamps only');
    const name = await ensureInDuckDb(resource);
    const columns = resource.schema.fields.map((field) =>
      field.type === 'TIMESTAMP' ? `epoch_us("${field.name}")` : `"${field.name}"`,
    );
    const reader = await sql.runAndReadAll(
      `SELECT ${columns.join(', ')} FROM ${name} ORDER BY rowid LIMIT ${max} OFFSET ${start}`,
    );
    const rows = reader.getRowsJson().map((row) => ({ f: row.map((v) => ({ v: cell(v) })) }));
    return {
      kind: 'bigquery#tableDataList',
      totalRows: resource.numRows,
      ...(rows.length > 0 ? { rows } : {}),
    };
  }

  function insertDataset(body: Record<string, unknown>): DatasetResource {
    const reference = body.datasetReference as { datasetId?: unknown; projectId?: unknown } | undefined;
    const id = reference?.datasetId;
    if (typeof id !== 'string' || !ID.test(id)) throw new BigQueryFailure(400, 'invalid', 'Invalid dataset ID');
    if (reference?.projectId !== undefined && reference.projectId !== project)
      throw new BigQueryFailure(400, 'invalid', 'Wrong project');
    if (typeof body.location !== 'string') throw new BigQueryFailure(400, 'invalid', 'Location is required here');
    if (datasets.has(id)) throw new BigQueryFailure(409, 'duplicate', `Already Exists: Dataset ${project}:${id}`);
    const resource: DatasetResource = {
      datasetReference: { projectId: project, datasetId: id },
      location: body.location,
      ...pick(body, ['description', 'friendlyName', 'labels']),
    };
    datasets.set(id, resource);
    return resource;
  }

  function deleteDataset(id: string, deleteContents: boolean): undefined {
    dataset(id);
    const own = [...tables.keys()].filter((key) => key.startsWith(`${id}.`));
    if (own.length > 0 && !deleteContents) {
      throw new BigQueryFailure(400, 'resourceInUse', `Dataset ${project}:${id} is still in use`);
    }
    for (const key of own) tables.delete(key);
    datasets.delete(id);
    return undefined;
  }

  function insertTable(datasetId: string, body: Record<string, unknown>): TableResource {
    dataset(datasetId);
    const reference = body.tableReference as TableResource['tableReference'] | undefined;
    if (reference?.projectId !== project || reference.datasetId !== datasetId || !ID.test(reference.tableId)) {
      throw new BigQueryFailure(400, 'invalid', 'Invalid tableReference');
    }
    const key = `${datasetId}.${reference.tableId}`;
    if (tables.has(key)) throw new BigQueryFailure(409, 'duplicate', `Already Exists: Table ${project}:${key}`);
    const resource: TableResource = {
      tableReference: reference,
      schema: { fields: checkedFields(body.schema) },
      numRows: '0',
      ...pick(body, ['description', 'friendlyName', 'labels']),
    };
    tables.set(key, resource);
    return resource;
  }

  /** tables.patch takes the whole schema: every existing column, same type, mode kept or relaxed. */
  function patchTable(resource: TableResource, body: Record<string, unknown>): TableResource {
    if (body.schema !== undefined) {
      const fields = checkedFields(body.schema);
      const { datasetId, tableId } = resource.tableReference;
      const where = `Provided Schema does not match Table ${project}:${datasetId}.${tableId}.`;
      resource.schema.fields.forEach((old, index) => {
        const next = fields[index];
        if (next?.name !== old.name)
          throw new BigQueryFailure(400, 'invalid', `${where} Field ${old.name} is missing in new schema`);
        if (next.type !== old.type) {
          throw new BigQueryFailure(
            400,
            'invalid',
            `${where} Field ${old.name} has changed type from ${old.type} to ${next.type}`,
          );
        }
        const [was, now] = [old.mode ?? 'NULLABLE', next.mode ?? 'NULLABLE'];
        if (was !== now && !(was === 'REQUIRED' && now === 'NULLABLE')) {
          throw new BigQueryFailure(400, 'invalid', `${where} Field ${old.name} has changed mode from ${was} to ${now}`);
        }
      });
      for (const added of fields.slice(resource.schema.fields.length)) {
        if (added.mode === 'REQUIRED')
          throw new BigQueryFailure(400, 'invalid', `${where} Cannot add required field ${added.name}`);
      }
      resource.schema = { fields };
    }
    return Object.assign(resource, pick(body, ['description', 'friendlyName', 'labels']));
  }

  const server = createServer((req, res) => {
    void respond(req, res);
  });

  async function respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body: unknown = text ? JSON.parse(text) : undefined;
    // prettyPrint is a system parameter of every Google API, not part of the method.
    url.searchParams.delete('prettyPrint');
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method: req.method ?? '', path: url.pathname, query, body, authorization: req.headers.authorization });

    try {
      const prefix = `/bigquery/v2/projects/${project}/`;
      if (!url.pathname.startsWith(prefix)) throw new BigQueryFailure(404, 'notFound', `Not found: Project ${url.pathname}`);
      if (nextFailure) {
        const failure = nextFailure;
        nextFailure = undefined;
        throw failure;
      }
      const segments = url.pathname.slice(prefix.length).split('/').map(decodeURIComponent);
      const result = await handle(req.method ?? 'GET', segments, query, (body ?? {}) as Record<string, unknown>);
      if (result === undefined) {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(result));
    } catch (error) {
      if (!(error instanceof BigQueryFailure)) throw error;
      const payload = {
        error: {
          code: error.status,
          message: error.message,
          errors: [{ message: error.message, domain: 'global', reason: error.reason }],
          status: error.status === 404 ? 'NOT_FOUND' : error.status === 409 ? 'ALREADY_EXISTS' : 'INVALID_ARGUMENT',
        },
      };
      res.writeHead(error.status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(payload));
    }
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    datasets,
    tables,
    jobs,
    /** What the next load jobs do. */
    loadsWill(outcome: LoadOutcome) {
      loadOutcome = outcome;
    },
    /** The next request fails as BigQuery would, e.g. (403, 'accessDenied', 'Access Denied: ...'). */
    failNext(status: number, reason: string, message: string) {
      nextFailure = new BigQueryFailure(status, reason, message);
    },
    executed,
    /** Query and extract jobs stay RUNNING while held (to cancel them). */
    hold(on: boolean) {
      holding = on;
    },
    /** Runs `statement` in DuckDB with `{table}` standing for the table, which then has the rows it holds. */
    async fill(datasetId: string, tableId: string, statement: string) {
      const name = await ensureInDuckDb(table(datasetId, tableId));
      await sql.run(statement.replaceAll('{table}', name));
      const count = (await sql.runAndReadAll(`SELECT count(*) FROM ${name}`)).getRows()[0]![0];
      table(datasetId, tableId).numRows = String(count);
    },
    async close() {
      server.close();
      server.closeAllConnections();
      await once(server, 'close');
      sql.closeSync();
      duck.closeSync();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

export type FakeBigQuery = Awaited<ReturnType<typeof startFakeBigQuery>>;

/** BigQuery's on-demand bytes billed: 10 MB at least per referenced table and per query, rounded up to a whole MB. */
function onDemandBilled(perTable: number[]): number {
  const mb = 2 ** 20;
  const total = Math.max(
    10 * mb,
    perTable.reduce((sum, bytes) => sum + Math.max(10 * mb, bytes), 0),
  );
  return Math.ceil(total / mb) * mb;
}

function checkedFields(schema: unknown): SchemaField[] {
  const fields = (schema as { fields?: unknown } | undefined)?.fields;
  if (!Array.isArray(fields) || fields.length === 0) throw new BigQueryFailure(400, 'invalid', 'Schema has no fields');
  return fields.map((field: Record<string, unknown>) => {
    const unknown = Object.keys(field).filter((key) => !FIELD_KEYS.has(key));
    if (unknown.length > 0) throw new BigQueryFailure(400, 'invalid', `Invalid field selection ${unknown.join(', ')}`);
    const { name, type, mode, description } = field;
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,299}$/.test(name)) {
      throw new BigQueryFailure(400, 'invalid', `Invalid field name ${JSON.stringify(name)}`);
    }
    if (typeof type !== 'string' || !TYPES.has(type))
      throw new BigQueryFailure(400, 'invalid', `Invalid value for type: ${JSON.stringify(type)}`);
    if (mode !== undefined && (typeof mode !== 'string' || !MODES.has(mode))) {
      throw new BigQueryFailure(400, 'invalid', `Invalid value for mode: ${JSON.stringify(mode)}`);
    }
    if (description !== undefined && typeof description !== 'string')
      throw new BigQueryFailure(400, 'invalid', 'Bad description');
    return field as unknown as SchemaField;
  });
}

/** One page of `items`: from the offset in `pageToken`, at most PAGE_SIZE (or `maxResults`) of them. */
function page<T>(query: Record<string, string>, items: T[], body: (items: T[], nextPageToken?: string) => unknown): unknown {
  const start = query.pageToken === undefined ? 0 : Number(Buffer.from(query.pageToken, 'base64url').toString());
  if (!Number.isInteger(start) || start < 0) throw new BigQueryFailure(400, 'invalid', 'Invalid page token');
  const size = Math.min(PAGE_SIZE, query.maxResults === undefined ? PAGE_SIZE : Number(query.maxResults));
  const end = start + size;
  return body(items.slice(start, end), end < items.length ? Buffer.from(String(end)).toString('base64url') : undefined);
}

function pick(body: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => key in body).map((key) => [key, body[key]]));
}

// BigQuery's (legacy) type names of DuckDB's types, and back.
const FROM_DUCKDB: [RegExp, string][] = [
  [/^(BIGINT|INTEGER|SMALLINT|TINYINT|HUGEINT|UBIGINT|UINTEGER)$/, 'INTEGER'],
  [/^(DOUBLE|FLOAT)$/, 'FLOAT'],
  [/^DECIMAL/, 'NUMERIC'],
  [/^BOOLEAN$/, 'BOOLEAN'],
  [/^BLOB$/, 'BYTES'],
  [/^DATE$/, 'DATE'],
  [/^TIME$/, 'TIME'],
  [/^TIMESTAMP WITH TIME ZONE$/, 'TIMESTAMP'],
  [/^TIMESTAMP$/, 'DATETIME'],
];

function bigQueryField(name: string, duckType: string): SchemaField {
  const repeated = duckType.endsWith('[]');
  const base = repeated ? duckType.slice(0, -2) : duckType;
  const type = FROM_DUCKDB.find(([pattern]) => pattern.test(base))?.[1] ?? 'STRING';
  return { name, type, mode: repeated ? 'REPEATED' : 'NULLABLE' };
}

const TO_DUCKDB: Record<string, string> = {
  INT64: 'BIGINT',
  INTEGER: 'BIGINT',
  FLOAT64: 'DOUBLE',
  FLOAT: 'DOUBLE',
  NUMERIC: 'DECIMAL(38, 9)',
  BOOL: 'BOOLEAN',
  BOOLEAN: 'BOOLEAN',
  BYTES: 'BLOB',
  TIMESTAMP: 'TIMESTAMPTZ',
  DATETIME: 'TIMESTAMP',
  JSON: 'VARCHAR',
  STRING: 'VARCHAR',
};

function duckDbType(field: SchemaField): string {
  const type = TO_DUCKDB[field.type] ?? field.type;
  return field.mode === 'REPEATED' ? `${type}[]` : type;
}

/**
 * GoogleSQL to DuckDB, as far as the fake needs (see the header): backtick names become quoted
 * identifiers (`project.dataset.table` → "dataset"."table"), `* EXCEPT (` becomes `* EXCLUDE (`, and
 * CAST's scalar types their DuckDB names. Single-quoted strings pass untouched.
 */
export function googleSqlToDuckDb(text: string, project: string): string {
  const parts = text.split(/('(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)/);
  return parts
    .map((part) => {
      if (part.startsWith("'")) return part;
      if (part.startsWith('`')) {
        const names = part.slice(1, -1).split('.');
        const local = names.length === 3 && names[0] === project ? names.slice(1) : names;
        return local.map((name) => `"${name}"`).join('.');
      }
      return part
        .replace(/\*\s+EXCEPT\s*\(/gi, '* EXCLUDE (')
        .replace(
          /\bAS\s+(INT64|FLOAT64|BOOL|BYTES|NUMERIC|DATETIME|TIMESTAMP|STRING)\b/gi,
          (_m, type: string) => `AS ${TO_DUCKDB[type.toUpperCase()]}`,
        );
    })
    .join('');
}

/** Every `schema.table` a DuckDB parse tree reads (CTE names have no schema). */
function collectTables(node: unknown, found: (datasetId: string, tableId: string) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) collectTables(item, found);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  if (record.type === 'BASE_TABLE' && typeof record.schema_name === 'string' && record.schema_name !== '') {
    found(record.schema_name, record.table_name as string);
  }
  for (const child of Object.values(record)) collectTables(child, found);
}

/** A value as BigQuery's JSON rows carry it: text, or null. */
function cell(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => ({ v: cell(item) }));
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function isLoad(body: Record<string, unknown>): boolean {
  return (body.configuration as { load?: unknown } | undefined)?.load !== undefined;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

const AVRO_TYPES: Record<string, string> = { INTEGER: 'long', FLOAT: 'double', BOOLEAN: 'boolean', BYTES: 'bytes' };

/** An Avro object container file of the rows, as BigQuery writes one (nullable fields, deflate or no codec). */
async function avroFile(connection: DuckDBConnection, select: string, fields: SchemaField[], deflate: boolean): Promise<Buffer> {
  const kinds = fields.map((field) => AVRO_TYPES[field.type] ?? 'string');
  const type = avsc.Type.forSchema(
    { type: 'record', name: 'Root', fields: fields.map((field, i) => ({ name: field.name, type: ['null', kinds[i]!] })) },
    { registry: { long: bigLong } },
  );
  const encoder = new avsc.streams.BlockEncoder(type, { codec: deflate ? 'deflate' : 'null' });
  const chunks: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = once(encoder, 'end');
  const rows = (await connection.runAndReadAll(select)).getRows();
  for (const row of rows) {
    encoder.write(
      Object.fromEntries(
        fields.map((field, i) => {
          const value = row[i];
          if (value === null || value === undefined) return [field.name, null];
          if (kinds[i] === 'long') return [field.name, BigInt(value as bigint)];
          if (kinds[i] === 'double') return [field.name, Number(value)];
          return [field.name, kinds[i] === 'boolean' ? value : String(value)];
        }),
      ),
    );
  }
  encoder.end();
  await ended;
  return Buffer.concat(chunks);
}
