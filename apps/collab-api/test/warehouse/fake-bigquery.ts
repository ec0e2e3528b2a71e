/**
 * A loopback server that speaks the part of the BigQuery REST API v2 the warehouse calls
 * (datasets.insert/list/patch/delete, tables.insert/list/get/patch/delete). It checks request
 * bodies as BigQuery documents them, enforces BigQuery's rules for schema patches, pages lists
 * with `pageToken`/`nextPageToken` (PAGE_SIZE items a page unless `maxResults` says fewer), and
 * answers failures with BigQuery's error body `{ error: { code, message, errors: [{ reason, message }] } }`.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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

interface JobResource {
  kind: 'bigquery#job';
  id: string;
  jobReference: { projectId: string; jobId: string; location: string };
  configuration: { load: LoadConfiguration };
  status: {
    state: 'RUNNING' | 'DONE';
    errorResult?: { reason: string; message: string };
    errors?: { reason: string; message: string }[];
  };
  statistics?: { load: { outputRows: string; inputFileBytes: string } };
  outcome: LoadOutcome;
}

const LOAD_FORMATS = new Set(['CSV', 'NEWLINE_DELIMITED_JSON', 'AVRO', 'PARQUET', 'ORC']);

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

export async function startFakeBigQuery(project: string) {
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

  function handle(method: string, segments: string[], query: Record<string, string>, body: Record<string, unknown>): unknown {
    if (segments[0] === 'jobs') return handleJob(method, segments[1], segments[2], body);
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
  function handleJob(
    method: string,
    jobId: string | undefined,
    action: string | undefined,
    body: Record<string, unknown>,
  ): unknown {
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
      job.status = { state: 'DONE', errorResult: { reason: 'stopped', message: 'Job was cancelled' } };
      return { kind: 'bigquery#jobCancelResponse', job: view(job) };
    }
    if (method === 'GET' && action === undefined) {
      if (job.status.state === 'RUNNING') finishJob(job);
      return view(job);
    }
    throw new BigQueryFailure(404, 'notFound', `No method ${method} here`);
  }

  function finishJob(job: JobResource): void {
    const { load } = job.configuration;
    const target = table(load.destinationTable.datasetId, load.destinationTable.tableId);
    const { outcome } = job;
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

  function view(job: JobResource): Omit<JobResource, 'outcome'> {
    const { outcome: _, ...visible } = job;
    return visible;
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
      const result = handle(req.method ?? 'GET', segments, query, (body ?? {}) as Record<string, unknown>);
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
    async close() {
      server.close();
      server.closeAllConnections();
      await once(server, 'close');
    },
  };
}

export type FakeBigQuery = Awaited<ReturnType<typeof startFakeBigQuery>>;

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
