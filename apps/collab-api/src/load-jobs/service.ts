import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ConflictError, NotFoundError, UnsupportedMediaTypeError, ValidationError } from '@repo/errors';
import type { Actor } from '../access/index.js';
import { SOURCE_FORMATS } from '../adapters/warehouse/index.js';
import type { Database, Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import type { LoadJob } from '../generated/prisma/client.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';
import { iso, isoOrNull, type ListOptions } from '../shared/schemas.js';
import { findTable } from '../tables/service.js';
import { formatOfFileName, keySafeFileName } from './formats.js';
import type { CreateLoadJobInput, LoadJobResponse } from './schemas.js';
import { checkUploadLink, signedUploadUrl, type StoredUpload, UPLOAD_CONTENT_TYPE } from './upload.js';

/** What the load-job routes use. */
export type LoadJobDeps = Pick<Deps, 'db' | 'storage' | 'queue' | 'config' | 'uploadUrlSecret'>;

// Cloud Storage takes objects of up to 5 TiB; this service's own upload link takes files of up to 5 GiB.
export const UPLOAD_LINK_MAX_BYTES = 5 * 1024 ** 3;

const ALREADY_RUNNING = 'A load job is already running for this table: wait for it to end, or cancel it';

export function toLoadJobResponse(job: LoadJob): LoadJobResponse {
  return {
    id: job.id,
    tenant_id: job.tenantId,
    table_id: job.tableId,
    status: job.status,
    source_uri: job.sourceUri,
    source_format: job.sourceFormat,
    write_disposition: job.writeDisposition,
    autodetect: job.autodetect,
    statistics: {
      rows_loaded: job.rowsLoaded === null ? null : Number(job.rowsLoaded),
      bytes_processed: job.bytesProcessed === null ? null : Number(job.bytesProcessed),
      duration_ms: job.durationMs,
    },
    error_details: job.errorDetails as LoadJobResponse['error_details'],
    created_at: iso(job.createdAt),
    started_at: isoOrNull(job.startedAt),
    ended_at: isoOrNull(job.endedAt),
  };
}

/**
 * With a file (stored already, see storeUpload): starts the job at once (409 when a job of the
 * table runs). Without: a Pending job, and the URL to upload its file to.
 */
export async function createLoadJob(
  deps: LoadJobDeps,
  actor: Actor,
  input: CreateLoadJobInput,
  file: StoredUpload | undefined,
): Promise<LoadJobResponse & { upload_url?: string; upload_url_expires_at?: string }> {
  const format = input.source_format ?? (file ? formatOfFileName(file.originalName) : undefined);
  if (!format) {
    throw new ValidationError([
      {
        loc: ['body', 'source_format'],
        msg: file
          ? `The file name does not say the format: give source_format, one of ${SOURCE_FORMATS.join(', ')}`
          : 'Field required when no file is sent',
        type: 'missing',
      },
    ]);
  }
  const table = await findTable(deps.db, actor, input.table_id);
  const key = file?.key ?? objectKey(actor, `upload.${format.toLowerCase()}`);
  const data = {
    tenantId: actor.tenantId,
    tableId: table.id,
    storageKey: key,
    sourceUri: storageUri(deps, key),
    sourceFormat: format,
    writeDisposition: input.write_disposition,
    autodetect: input.autodetect,
  };
  if (!file) {
    const job = await deps.db.loadJob.create({ data: { ...data, status: 'Pending' } });
    const link = await uploadLink(deps, job);
    return { ...toLoadJobResponse(job), upload_url: link.url, upload_url_expires_at: iso(link.expiresAt) };
  }
  const job = await deps.db.$transaction(async (tx) => {
    await findTable(tx, actor, table.id, 'share');
    const job = await conflictOnDuplicate(
      tx.loadJob.create({ data: { ...data, status: 'Running', runningTableId: table.id, startedAt: new Date() } }),
      ['running_table_id'],
      ALREADY_RUNNING,
    );
    await deps.queue.send('load-job', { load_job_id: job.id }, { tx });
    return job;
  });
  deps.queue.wake('load-job');
  return toLoadJobResponse(job);
}

/** Stores the file of `POST /load_job/` as it arrives (up to the configured size), under a fresh key. */
export async function storeUpload(deps: LoadJobDeps, actor: Actor, originalName: string, body: Readable): Promise<StoredUpload> {
  const key = objectKey(actor, keySafeFileName(originalName));
  const stored = await deps.storage.putStream(key, body, {
    contentType: UPLOAD_CONTENT_TYPE,
    maxBytes: deps.config.COLLAB_LOAD_MAX_UPLOAD_BYTES,
  });
  return { key, originalName, size: stored.size };
}

/** Starts a Pending job whose file has been uploaded (409 while it has not, or when a job of the table runs). */
export async function startLoadJob(deps: LoadJobDeps, actor: Actor, jobId: string): Promise<LoadJobResponse> {
  const job = await findLoadJob(deps.db, actor, jobId);
  if (job.status !== 'Pending') throw new ConflictError(`The job is ${job.status}: only a Pending job starts`);
  try {
    (await deps.storage.open(job.storageKey)).stream.destroy();
  } catch (error) {
    if (error instanceof NotFoundError) {
      throw new ConflictError('The file has not been uploaded yet: PUT it to the upload_url first');
    }
    throw error;
  }
  const started = await deps.db.$transaction(async (tx) => {
    await findTable(tx, actor, job.tableId, 'share');
    const { count } = await conflictOnDuplicate(
      tx.loadJob.updateMany({
        where: { id: job.id, status: 'Pending' },
        data: { status: 'Running', runningTableId: job.tableId, startedAt: new Date() },
      }),
      ['running_table_id'],
      ALREADY_RUNNING,
    );
    if (count === 0) throw new ConflictError('The job has been started or cancelled meanwhile');
    await deps.queue.send('load-job', { load_job_id: job.id }, { tx });
    return findLoadJob(tx, actor, job.id);
  });
  deps.queue.wake('load-job');
  return toLoadJobResponse(started);
}

export async function getLoadJob(db: Database, actor: Actor, jobId: string): Promise<LoadJobResponse> {
  return toLoadJobResponse(await findLoadJob(db, actor, jobId));
}

/** The jobs of a table, newest first. */
export async function listLoadJobs(
  db: Database,
  actor: Actor,
  tableId: string,
  page: ListOptions,
): Promise<{ load_jobs: LoadJobResponse[] }> {
  const table = await findTable(db, actor, tableId);
  const jobs = await db.loadJob.findMany({
    where: { tableId: table.id, tenantId: actor.tenantId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    skip: page.skip,
    take: page.limit,
  });
  return { load_jobs: jobs.map(toLoadJobResponse) };
}

/**
 * A Pending job is Cancelled at once; a Running one is asked to stop, which the worker does
 * before it commits, if it still can (the job then ends Cancelled, the table unchanged). An
 * ended job: 409.
 */
export async function cancelLoadJob(db: Database, actor: Actor, jobId: string): Promise<LoadJobResponse> {
  const job = await findLoadJob(db, actor, jobId);
  if (job.status === 'Pending') {
    await db.loadJob.updateMany({ where: { id: job.id, status: 'Pending' }, data: { status: 'Cancelled', endedAt: new Date() } });
  } else if (job.status === 'Running') {
    await db.loadJob.updateMany({ where: { id: job.id, status: 'Running' }, data: { cancelRequestedAt: new Date() } });
  } else {
    throw new ConflictError(`The job has already ended: it is ${job.status}`);
  }
  const after = await findLoadJob(db, actor, jobId);
  // Started meanwhile: ask that one to stop.
  if (job.status === 'Pending' && after.status === 'Running') return cancelLoadJob(db, actor, jobId);
  return toLoadJobResponse(after);
}

/** Stores the body of a PUT to a Pending job's upload link (the link is the credential). */
export async function receiveLinkUpload(
  deps: LoadJobDeps,
  jobId: string,
  query: { expires: string; token: string },
  body: Readable & { body?: unknown },
): Promise<{ size: number }> {
  checkUploadLink(jobId, query, deps.uploadUrlSecret);
  // A JSON body was parsed (and cut at 1 MB) before it got here.
  if (body.body !== undefined) throw new UnsupportedMediaTypeError(`Send the file with Content-Type: ${UPLOAD_CONTENT_TYPE}`);
  const job = await deps.db.loadJob.findUnique({ where: { id: jobId } });
  if (!job) throw new NotFoundError('Load job not found');
  if (job.status !== 'Pending') throw new ConflictError(`The job is ${job.status}: its file can no longer change`);
  const stored = await deps.storage.putStream(job.storageKey, body, {
    contentType: UPLOAD_CONTENT_TYPE,
    maxBytes: UPLOAD_LINK_MAX_BYTES,
  });
  return { size: stored.size };
}

/** The job of a live table of the actor's tenant, or 404 (another tenant's job, or a deleted table's). */
async function findLoadJob(db: Database | Transaction, actor: Actor, jobId: string): Promise<LoadJob> {
  const job = await db.loadJob.findFirst({ where: { id: jobId, tenantId: actor.tenantId, table: { archivedAt: null } } });
  if (!job) throw new NotFoundError('Load job not found');
  return job;
}

/** `load-jobs/<tenant>/<random>/<file name>`: a fresh key for every upload. */
function objectKey(actor: Actor, fileName: string): string {
  return `load-jobs/${actor.tenantId}/${randomUUID()}/${fileName}`;
}

/** How the job record names where its file is: `gs://bucket/key` on Cloud Storage, `<backend>://key` otherwise. */
function storageUri(deps: LoadJobDeps, key: string): string {
  return deps.storage.backend === 'gcs' ? `gs://${deps.config.GCS_BUCKET}/${key}` : `${deps.storage.backend}://${key}`;
}

/** A signed URL straight to Cloud Storage, or this service's own signed upload link. */
async function uploadLink(deps: LoadJobDeps, job: LoadJob): Promise<{ url: string; expiresAt: Date }> {
  const ttlSeconds = deps.config.COLLAB_LOAD_UPLOAD_URL_TTL_SECONDS;
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  const presigned = await deps.storage.presignedUploadUrl(job.storageKey, {
    expiresInSeconds: ttlSeconds,
    contentType: UPLOAD_CONTENT_TYPE,
  });
  if (presigned) return { url: presigned, expiresAt };
  const baseUrl = deps.config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${deps.config.PORT}`;
  return signedUploadUrl(job.id, { baseUrl, secret: deps.uploadUrlSecret, ttlSeconds });
}
