/**
 * The warehouse in BigQuery: a dataset is a BigQuery dataset, a table a table, changed through
 * the REST API (datasets.insert/list/patch/delete, tables.insert/list/get/patch/delete).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BigQuery, FormattedMetadata, Job, JobMetadata, TableField } from '@google-cloud/bigquery';
import { UpstreamError } from '@repo/errors';
import { type BigQueryOptions, bigQueryClient, call, ignoring } from './bigquery-client.js';
import type {
  LoadRequest,
  LoadResult,
  PreparedLoad,
  SourceFormat,
  TableRef,
  TableUpdate,
  Warehouse,
  WarehouseDataset,
  WarehouseMetadata,
} from './interface.js';
import { LoadFailure, type LoadProblem, problemsFailure } from './load/problems.js';
import { idOfPhysicalName, physicalNames, withoutPhysicalNames } from './names.js';
import { type Field, type FieldType, FIELD_TYPES, planSchemaChange } from './schema.js';

export function createBigQueryWarehouse(options: BigQueryOptions): Warehouse {
  return new BigQueryWarehouse(bigQueryClient(options), options.location);
}

class BigQueryWarehouse implements Warehouse {
  readonly kind = 'bigquery';

  constructor(
    private readonly client: BigQuery,
    private readonly location: string,
    private readonly pollMs = 1000,
  ) {}

  async createDataset(datasetId: string, metadata: WarehouseMetadata = {}): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    await ignoring(
      409,
      call('create the dataset', () =>
        this.client.createDataset(dataset, { location: this.location, ...metadataBody(metadata) }),
      ),
    );
  }

  async updateDataset(datasetId: string, metadata: WarehouseMetadata): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    const body = metadataBody(metadata);
    // A patch with nothing in it still proves the dataset exists.
    await call('update the dataset', () => this.client.dataset(dataset).setMetadata(body));
  }

  async deleteDataset(datasetId: string): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    // force: deleteContents=true, so the dataset's tables go with it.
    await ignoring(
      404,
      call('delete the dataset', () => this.client.dataset(dataset).delete({ force: true })),
    );
  }

  async createTable(ref: TableRef, fields: Field[], metadata: WarehouseMetadata = {}): Promise<void> {
    const { dataset, table } = physicalNames(ref);
    await ignoring(
      409,
      call('create the table', () =>
        this.client
          .dataset(dataset)
          .createTable(table, { schema: { fields: toBigQueryFields(fields) }, ...metadataBody(metadata) }),
      ),
    );
  }

  async updateTable(ref: TableRef, update: TableUpdate): Promise<void> {
    const body: Record<string, unknown> = metadataBody(update);
    const current = update.schema && (await this.tableMetadata(ref));
    // Already so (applied before an interruption, or by a load that changed the columns): nothing to change.
    if (update.schema && current && !sameBigQueryColumns(current.schema?.fields ?? [], update.schema.to)) {
      const plan = planSchemaChange(update.schema.from, update.schema.to, { tableHasRows: rowCount(current) > 0 });
      if (plan.kind === 'replace') {
        await this.replaceTable(ref, plan.fields, { ...keptMetadata(current), ...body });
        return;
      }
      // planSchemaChange keeps existing columns in order and puts new ones last, so the new
      // list is what tables.patch takes: the whole schema, with added fields and relaxed modes.
      if (plan.changes.some((change) => change.kind !== 'set_private')) {
        body.schema = { fields: toBigQueryFields(update.schema.to) };
      }
    }
    if (Object.keys(body).length === 0) return;
    const { dataset, table } = physicalNames(ref);
    await call('update the table', () => this.client.dataset(dataset).table(table).setMetadata(body));
  }

  async deleteTable(ref: TableRef): Promise<void> {
    const { dataset, table } = physicalNames(ref);
    await ignoring(
      404,
      call('delete the table', () => this.client.dataset(dataset).table(table).delete()),
    );
  }

  async tableRowCount(ref: TableRef): Promise<number | null> {
    try {
      return rowCount(await this.tableMetadata(ref));
    } catch (error) {
      if (error instanceof UpstreamError && error.details.status === 404) return null;
      throw error;
    }
  }

  /**
   * A BigQuery load job from the file in Cloud Storage, which BigQuery reads, checks and loads
   * all or nothing (maxBadRecords 0); autodetect infers the columns there. Nothing to prepare.
   */
  prepareLoad(ref: TableRef, request: LoadRequest): Promise<PreparedLoad> {
    if (!request.source.uri.startsWith('gs://')) {
      return Promise.reject(new LoadFailure('BigQuery loads files from Cloud Storage: run with STORAGE_BACKEND=gcs'));
    }
    return Promise.resolve({
      fields: request.autodetect ? undefined : request.fields,
      commit: () => this.runLoadJob(ref, request),
      abort: () => Promise.resolve(),
    });
  }

  async findLoad(ref: TableRef, loadId: string): Promise<LoadResult | undefined> {
    let metadata: JobMetadata;
    try {
      metadata = await this.jobMetadata(this.client.job(loadJobId(loadId), { location: this.location }));
    } catch (error) {
      if (error instanceof UpstreamError && error.details.status === 404) return undefined;
      throw error;
    }
    if (metadata.status?.state !== 'DONE' || metadata.status.errorResult) return undefined;
    return this.loadResult(ref, metadata);
  }

  /**
   * jobs.insert with an id made from the load's, so that a load asked for again (after an
   * interruption) finds the job of the first ask (409) instead of loading twice; then jobs.get
   * until it is done. Aborting cancels the job (jobs.cancel).
   */
  private async runLoadJob(ref: TableRef, request: LoadRequest): Promise<LoadResult> {
    const jobId = loadJobId(request.loadId);
    const { dataset, table } = physicalNames(ref);
    const csv = request.format === 'CSV';
    const appendsWithNewColumns = request.autodetect && request.disposition === 'WRITE_APPEND';
    const load = {
      sourceUris: [request.source.uri],
      sourceFormat: BIGQUERY_FORMATS[request.format],
      destinationTable: { projectId: this.client.projectId, datasetId: dataset, tableId: table },
      createDisposition: 'CREATE_NEVER',
      writeDisposition: request.disposition,
      maxBadRecords: 0,
      ...(request.autodetect ? { autodetect: true } : { schema: { fields: toBigQueryFields(request.fields) } }),
      ...(appendsWithNewColumns ? { schemaUpdateOptions: ['ALLOW_FIELD_ADDITION', 'ALLOW_FIELD_RELAXATION'] } : {}),
      ...(csv ? { encoding: 'UTF-8', allowQuotedNewlines: true } : {}),
      ...(csv && !request.autodetect ? { skipLeadingRows: request.csvHeader === undefined ? 0 : 1 } : {}),
      ...(request.format === 'AVRO' ? { useAvroLogicalTypes: true } : {}),
    };
    let job: Job;
    try {
      [job] = await call('start the load job', () =>
        this.client.createJob({ jobId, location: this.location, configuration: { load } }),
      );
    } catch (error) {
      // Already started by an earlier attempt: follow that job.
      if (!(error instanceof UpstreamError && error.details.status === 409)) throw failedJob(error) ?? error;
      job = this.client.job(jobId, { location: this.location });
    }
    for (;;) {
      if (request.signal.aborted) {
        await call('cancel the load job', () => job.cancel()).catch(() => undefined);
        throw request.signal.reason;
      }
      const metadata = await this.jobMetadata(job);
      if (metadata.status?.state === 'DONE') {
        if (metadata.status.errorResult) throw loadJobFailure(metadata.status.errors ?? [metadata.status.errorResult]);
        return this.loadResult(ref, metadata);
      }
      await sleep(this.pollMs);
    }
  }

  private async jobMetadata(job: Job): Promise<JobMetadata> {
    const [metadata] = (await call('read the load job', () => job.getMetadata())) as [JobMetadata, unknown];
    return metadata;
  }

  private async loadResult(ref: TableRef, metadata: JobMetadata): Promise<LoadResult> {
    const statistics = metadata.statistics?.load;
    const result: LoadResult = {
      rowsLoaded: Number(statistics?.outputRows ?? 0),
      bytesProcessed: Number(statistics?.inputFileBytes ?? 0),
    };
    if (!metadata.configuration?.load?.autodetect) return result;
    const current = await this.tableMetadata(ref);
    return { ...result, fields: fromBigQueryFields(current.schema?.fields ?? []) };
  }

  // datasets.list and tables.list, every page: one request per page of datasets, and per page of each dataset's tables.
  async listDatasets(): Promise<WarehouseDataset[]> {
    const [datasets] = await call('list the datasets', () => this.client.getDatasets());
    const listed: WarehouseDataset[] = [];
    for (const dataset of datasets) {
      const datasetId = dataset.id === undefined ? undefined : idOfPhysicalName('dataset', dataset.id);
      if (datasetId === undefined) continue;
      const [tables] = await call('list the tables', () => dataset.getTables());
      const tableIds = tables.flatMap((table) => idOfPhysicalName('table', table.id ?? '') ?? []);
      listed.push({ datasetId, tableIds });
    }
    return listed;
  }

  // The client holds no connections or timers that outlive a request.
  async close(): Promise<void> {}

  private async tableMetadata(ref: TableRef): Promise<FormattedMetadata> {
    const { dataset, table } = physicalNames(ref);
    const [metadata] = (await call('read the table', () => this.client.dataset(dataset).table(table).getMetadata())) as [
      FormattedMetadata,
      unknown,
    ];
    return metadata;
  }

  /**
   * BigQuery cannot drop, retype or tighten columns in place; planSchemaChange allows those on
   * an empty table only, so deleting it and creating it anew loses nothing. Not atomic: if the
   * create fails, the table is gone and the error says so; the update is undone in the records,
   * and the reconciler makes the missing table again from them.
   */
  private async replaceTable(ref: TableRef, fields: Field[], metadata: Record<string, unknown>): Promise<void> {
    const { dataset, table } = physicalNames(ref);
    await call('delete the table to replace it', () => this.client.dataset(dataset).table(table).delete());
    await call('create the replacement table', () =>
      this.client.dataset(dataset).createTable(table, { ...metadata, schema: { fields: toBigQueryFields(fields) } }),
    );
  }
}

const BIGQUERY_FORMATS: Record<SourceFormat, string> = {
  CSV: 'CSV',
  JSON: 'NEWLINE_DELIMITED_JSON',
  AVRO: 'AVRO',
  PARQUET: 'PARQUET',
  ORC: 'ORC',
};

/** A BigQuery job id for a load (letters, digits, `_` and `-`). */
export function loadJobId(loadId: string): string {
  return `collab_load_${loadId.replaceAll('-', '_')}`;
}

/** BigQuery's legacy names, as it reports a schema it inferred. */
const LEGACY_TYPES: Record<string, FieldType> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL' };

/** The columns BigQuery has (autodetect's): nested RECORDs become JSON, as the app has no nested columns. */
function fromBigQueryFields(fields: TableField[]): Field[] {
  return fields.map((field) => {
    const type = String(field.type ?? 'STRING').toUpperCase();
    const known = LEGACY_TYPES[type] ?? FIELD_TYPES.find((candidate) => candidate === type) ?? 'JSON';
    const mode = field.mode === 'REQUIRED' || field.mode === 'REPEATED' ? field.mode : 'NULLABLE';
    return {
      name: field.name ?? '',
      type: known,
      mode,
      ...(field.description ? { description: field.description } : {}),
      private: false,
    };
  });
}

interface BigQueryJobError {
  reason?: string;
  location?: string;
  message?: string;
}

/**
 * The job's errors as problems: BigQuery names the column in its message (`for field amount`),
 * the row rarely (`Row 3` / `line 3`); the first error is the summary.
 */
function loadJobFailure(errors: BigQueryJobError[]): LoadFailure {
  const problems: LoadProblem[] = errors.map((error) => {
    const message = withoutPhysicalNames(error.message ?? error.reason ?? 'unknown error');
    const row = /\b(?:row|line)[: ]+(\d+)/i.exec(message)?.[1];
    const column = /\bfield[: ]+([A-Za-z_][A-Za-z0-9_]*)/i.exec(message)?.[1];
    return { row: row === undefined ? null : Number(row), column: column ?? null, reason: message };
  });
  return problemsFailure(problems, problems.length, 'BigQuery refused the load');
}

/** A job that BigQuery refused as it was inserted (done at once, with errors). */
function failedJob(error: unknown): LoadFailure | undefined {
  const cause = (error as { cause?: { errors?: BigQueryJobError[]; response?: { status?: { errors?: BigQueryJobError[] } } } })
    .cause;
  const errors = cause?.response?.status?.errors;
  return errors?.length ? loadJobFailure(errors) : undefined;
}

/** Whether BigQuery's columns are `fields` (names, types, modes, descriptions; privacy is the app's own). */
function sameBigQueryColumns(columns: TableField[], fields: Field[]): boolean {
  const wanted = fromBigQueryFields(toBigQueryFields(fields));
  const found = fromBigQueryFields(columns);
  return (
    found.length === wanted.length &&
    found.every((column, i) => {
      const field = wanted[i]!;
      return (
        column.name === field.name &&
        column.type === field.type &&
        column.mode === field.mode &&
        column.description === field.description
      );
    })
  );
}

/** BigQuery's column schema; `private` is the app's own flag and stays out of it. */
function toBigQueryFields(fields: Field[]): TableField[] {
  return fields.map((field) => ({
    name: field.name,
    type: field.type,
    mode: field.mode,
    ...(field.description ? { description: field.description } : {}),
  }));
}

/** The keys of a patch or insert body that the metadata sets; absent keys stay out. */
function metadataBody(metadata: WarehouseMetadata): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (metadata.description !== undefined) body.description = metadata.description;
  if (metadata.friendlyName !== undefined) body.friendlyName = metadata.friendlyName;
  if (metadata.labels !== undefined) body.labels = metadata.labels;
  return body;
}

function keptMetadata(current: FormattedMetadata): Record<string, unknown> {
  return metadataBody({
    description: current.description ?? undefined,
    friendlyName: current.friendlyName ?? undefined,
    labels: current.labels ?? undefined,
  });
}

/** numRows leaves out rows still in the streaming buffer; those count too. */
function rowCount(metadata: FormattedMetadata): number {
  return Number(metadata.numRows ?? 0) + Number(metadata.streamingBuffer?.estimatedRows ?? 0);
}
