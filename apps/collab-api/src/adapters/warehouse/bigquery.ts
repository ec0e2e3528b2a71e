/**
 * The warehouse in BigQuery: a dataset is a BigQuery dataset, a table a table, changed through
 * the REST API (datasets.insert/patch/delete, tables.insert/get/patch/delete).
 */
import { BigQuery, type FormattedMetadata, type TableField } from '@google-cloud/bigquery';
import { UpstreamError } from '@repo/errors';
import { PassThroughClient } from 'google-auth-library';
import type { TableRef, TableUpdate, Warehouse, WarehouseMetadata } from './interface.js';
import { physicalNames } from './names.js';
import { type Field, planSchemaChange } from './schema.js';

export interface BigQueryWarehouseOptions {
  projectId: string;
  /** Location of new datasets, e.g. `US`, `EU`, `europe-west1`; tables live in their dataset's. */
  location: string;
  /** API base URL instead of Google's, e.g. an emulator. */
  apiEndpoint?: string;
  /**
   * `application-default`: Google's usual lookup (GOOGLE_APPLICATION_CREDENTIALS, workload
   * identity, metadata server); `none`: unauthenticated requests, for emulators; or a key file.
   */
  credentials: 'application-default' | 'none' | { keyFilename: string };
  /**
   * Retry rate limits, 5xx answers and lost connections with exponential backoff (the client's
   * default: up to 3 retries, some 15 s in all). Default true.
   */
  autoRetry?: boolean;
}

export function createBigQueryWarehouse(options: BigQueryWarehouseOptions): Warehouse {
  const { credentials } = options;
  const client = new BigQuery({
    projectId: options.projectId,
    location: options.location,
    ...(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {}),
    ...(credentials === 'none' ? { authClient: new PassThroughClient() } : {}),
    ...(typeof credentials === 'object' ? { keyFilename: credentials.keyFilename } : {}),
    retryOptions: { autoRetry: options.autoRetry ?? true },
  });
  return new BigQueryWarehouse(client, options.location);
}

class BigQueryWarehouse implements Warehouse {
  readonly kind = 'bigquery';

  constructor(
    private readonly client: BigQuery,
    private readonly location: string,
  ) {}

  async createDataset(datasetId: string, metadata: WarehouseMetadata = {}): Promise<void> {
    const { dataset } = physicalNames({ datasetId });
    await call('create the dataset', () =>
      this.client.createDataset(dataset, { location: this.location, ...metadataBody(metadata) }),
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
    await ignoringNotFound(call('delete the dataset', () => this.client.dataset(dataset).delete({ force: true })));
  }

  async createTable(ref: TableRef, fields: Field[], metadata: WarehouseMetadata = {}): Promise<void> {
    const { dataset, table } = physicalNames(ref);
    await call('create the table', () =>
      this.client
        .dataset(dataset)
        .createTable(table, { schema: { fields: toBigQueryFields(fields) }, ...metadataBody(metadata) }),
    );
  }

  async updateTable(ref: TableRef, update: TableUpdate): Promise<void> {
    const body: Record<string, unknown> = metadataBody(update);
    if (update.schema) {
      const current = await this.tableMetadata(ref);
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
    await ignoringNotFound(call('delete the table', () => this.client.dataset(dataset).table(table).delete()));
  }

  async tableRowCount(ref: TableRef): Promise<number> {
    return rowCount(await this.tableMetadata(ref));
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
   * create fails, the table is gone and the error says so; a retry of the update recreates it.
   */
  private async replaceTable(ref: TableRef, fields: Field[], metadata: Record<string, unknown>): Promise<void> {
    const { dataset, table } = physicalNames(ref);
    await call('delete the table to replace it', () => this.client.dataset(dataset).table(table).delete());
    await call('create the replacement table', () =>
      this.client.dataset(dataset).createTable(table, { ...metadata, schema: { fields: toBigQueryFields(fields) } }),
    );
  }
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

interface GoogleApiError {
  code?: unknown;
  message?: unknown;
  errors?: { reason?: string; message?: string }[];
}

/** Runs one API call; its failure becomes a 502 that carries BigQuery's message and reason. */
async function call<T>(action: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw toUpstreamError(action, error);
  }
}

/** For deletes: what is already gone needs no deleting. */
async function ignoringNotFound(deletion: Promise<unknown>): Promise<void> {
  try {
    await deletion;
  } catch (error) {
    if (error instanceof UpstreamError && error.details.status === 404) return;
    throw error;
  }
}

function toUpstreamError(action: string, error: unknown): UpstreamError {
  const { code, message, errors } = (error ?? {}) as GoogleApiError;
  // Anything without an HTTP status never reached BigQuery (DNS, connection, TLS); its text
  // names internal addresses, so it stays in the logged cause.
  if (typeof code !== 'number') {
    return new UpstreamError(`BigQuery could not ${action}: the API could not be reached`, { cause: error });
  }
  const [first] = errors ?? [];
  const reason = first?.reason;
  const text = first?.message ?? (typeof message === 'string' && message ? message.split('\n')[0] : `HTTP ${code}`);
  return new UpstreamError(`BigQuery could not ${action}: ${text}${reason ? ` (${reason})` : ''}`, {
    details: { status: code, ...(reason ? { reason } : {}) },
    cause: error,
  });
}
