import type { Readable } from 'node:stream';
import { ConflictError, ForbiddenError, GoneError, NotFoundError } from '@repo/errors';
import { signUrlPath, verifyUrlToken } from '@repo/storage';
import type { Actor } from '../access/index.js';
import type { ExportCompression, ExportFormat } from '../adapters/warehouse/query/index.js';
import type { Database, Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import type { QueryExport } from '../generated/prisma/client.js';
import { findJobWithResults, findQueryJob } from '../query-jobs/service.js';
import { resultsGone } from '../query-jobs/states.js';
import { iso, isoOrNull, type ListOptions, oldestFirst } from '../shared/schemas.js';
import type { CreateExportInput, QueryExportResponse } from './schemas.js';

export type ExportDeps = Pick<Deps, 'db' | 'queue' | 'storage' | 'config' | 'uploadUrlSecret' | 'now'>;

/** A download URL still this fresh is handed out again; an older one is replaced. */
const REUSE_MARGIN_MS = 60_000;

export function toQueryExportResponse(row: QueryExport): QueryExportResponse {
  return {
    id: row.id,
    query_job_id: row.queryJobId,
    tenant_id: row.tenantId,
    status: row.status,
    format: row.format,
    compression: row.compression,
    storage_path: row.storageKey,
    signed_url: row.signedUrl,
    error_message: row.errorMessage,
    created_at: iso(row.createdAt),
    completed_at: isoOrNull(row.completedAt),
    expires_at: isoOrNull(row.signedExpiresAt),
  };
}

/** The file's name and type: CSV and JSON files carry their compression outside, Avro and Parquet inside. */
export function exportFile(format: ExportFormat, compression: ExportCompression): { extension: string; contentType: string } {
  const base = {
    CSV: ['csv', 'text/csv'],
    JSON: ['json', 'application/x-ndjson'],
    AVRO: ['avro', 'application/avro'],
    PARQUET: ['parquet', 'application/vnd.apache.parquet'],
  }[format];
  if (format === 'CSV' || format === 'JSON') {
    if (compression === 'GZIP') return { extension: `${base[0]}.gz`, contentType: 'application/gzip' };
    if (compression === 'DEFLATE') return { extension: `${base[0]}.deflate`, contentType: 'application/zlib' };
  }
  return { extension: base[0]!, contentType: base[1]! };
}

/** Why a job's result may not leave the service: the datasets it read whose owners allow no exports (none: allowed). Pure. */
export function exportRefusal(blocked: { name: string }[]): string | undefined {
  if (blocked.length === 0) return undefined;
  const names = blocked.map((dataset) => `"${dataset.name}"`).join(', ');
  return `Exports of this job's result are not allowed: it read ${blocked.length > 1 ? 'datasets' : 'dataset'} ${names} of another tenant, whose owner does not allow exports (share_policy.allow_exports is false). Its pages can still be read`;
}

/** 403 when an owner of a dataset the job read allows no exports (its policy now, whenever the job ran). */
async function requireExportAllowed(db: Database | Transaction, jobId: string): Promise<void> {
  const blocked = await db.dataset.findMany({
    where: { allowExports: false, reads: { some: { queryJobId: jobId } } },
    select: { name: true },
    orderBy: { name: 'asc' },
  });
  const refusal = exportRefusal(blocked);
  if (refusal) throw new ForbiddenError(refusal);
}

/** The folder of an export's file in object storage: the file is the only object under it. */
export function exportFolder(exportRow: { tenantId: string; id: string }): string {
  return `query-exports/${exportRow.tenantId}/${exportRow.id}`;
}

async function findExport(db: Database, actor: Pick<Actor, 'tenantId'>, exportId: string) {
  const row = await db.queryExport.findFirst({
    where: { id: exportId, tenantId: actor.tenantId },
    include: { job: { select: { resultsExpireAt: true } } },
  });
  if (!row) throw new NotFoundError('Export not found');
  return row;
}

/** Queues an export of a DONE job of the actor's tenant (404 for another tenant's job, 409 before DONE, 410 once its results expired). */
export async function createExport(
  deps: ExportDeps,
  actor: Actor,
  jobId: string,
  input: CreateExportInput,
): Promise<QueryExportResponse> {
  const row = await deps.db.$transaction(async (tx) => {
    const job = await findJobWithResults(tx, actor, jobId, deps.now());
    await requireExportAllowed(tx, job.id);
    const row = await tx.queryExport.create({
      data: {
        tenantId: actor.tenantId,
        queryJobId: job.id,
        status: 'PENDING',
        format: input.format,
        compression: input.compression,
      },
    });
    await deps.queue.send('query-export', { export_id: row.id }, { tx });
    return row;
  });
  deps.queue.wake('query-export');
  return toQueryExportResponse(row);
}

export async function listExports(
  db: Database,
  actor: Actor,
  jobId: string,
  page: ListOptions,
): Promise<{ exports: QueryExportResponse[] }> {
  const job = await findQueryJob(db, actor, jobId);
  const rows = await db.queryExport.findMany({ where: { queryJobId: job.id, tenantId: actor.tenantId }, ...oldestFirst(page) });
  return { exports: rows.map(toQueryExportResponse) };
}

export async function getExport(db: Database, actor: Actor, exportId: string): Promise<QueryExportResponse> {
  return toQueryExportResponse(await findExport(db, actor, exportId));
}

/** The path of this service's own download link of an export: what its token signs. */
export function downloadPath(exportId: string): string {
  return `/api/v1/exports/${exportId}/file`;
}

/**
 * A URL that downloads a DONE export: the last one handed out while it has more than a minute
 * left, else a new one (Cloud Storage's V4 signed URL, or this service's own signed link). 410
 * once the job's results expired: the file is deleted with them.
 */
export async function downloadUrl(
  deps: ExportDeps,
  actor: Actor,
  exportId: string,
  now = deps.now().getTime(),
): Promise<{ url: string; expires_at: string }> {
  const row = await findExport(deps.db, actor, exportId);
  const gone = resultsGone(row.job.resultsExpireAt, new Date(now));
  if (gone) throw new GoneError(gone);
  await requireExportAllowed(deps.db, row.queryJobId);
  if (row.status !== 'DONE' || !row.storageKey)
    throw new ConflictError(`The export is ${row.status}: it can be downloaded once it is DONE`);
  if (row.signedUrl && row.signedExpiresAt && row.signedExpiresAt.getTime() - now > REUSE_MARGIN_MS) {
    return { url: row.signedUrl, expires_at: iso(row.signedExpiresAt) };
  }
  const ttlSeconds = deps.config.COLLAB_EXPORT_URL_TTL_SECONDS;
  const expires = Math.floor(now / 1000) + ttlSeconds;
  const file = exportFile(row.format, row.compression);
  const presigned = await deps.storage.presignedDownloadUrl(row.storageKey, {
    expiresInSeconds: ttlSeconds,
    filename: `query-${row.queryJobId}.${file.extension}`,
    contentType: file.contentType,
  });
  const baseUrl = deps.config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${deps.config.PORT}`;
  const query = new URLSearchParams({
    expires: String(expires),
    token: signUrlPath(downloadPath(row.id), expires, deps.uploadUrlSecret),
  });
  const url = presigned ?? `${baseUrl}${downloadPath(row.id)}?${query.toString()}`;
  const expiresAt = new Date(expires * 1000);
  await deps.db.queryExport.update({ where: { id: row.id }, data: { signedUrl: url, signedExpiresAt: expiresAt } });
  return { url, expires_at: iso(expiresAt) };
}

/** The file behind this service's own download link (the link is the credential: 403 when invalid or expired). */
export async function openDownload(
  deps: ExportDeps,
  exportId: string,
  link: { expires: string; token: string },
): Promise<{ stream: Readable; size: number; filename: string; contentType: string }> {
  const check = verifyUrlToken(downloadPath(exportId), link.expires, link.token, deps.uploadUrlSecret);
  if (check === 'expired') throw new ForbiddenError('This download link has expired: ask for a new one (GET .../download-url)');
  if (check === 'invalid') throw new ForbiddenError('This download link is not valid');
  const row = await deps.db.queryExport.findUnique({
    where: { id: exportId },
    include: { job: { select: { resultsExpireAt: true } } },
  });
  if (!row) throw new NotFoundError('Export not found');
  // Expired before missing: the sweep takes the file away (storageKey null) after the expiry moment.
  const gone = resultsGone(row.job.resultsExpireAt, deps.now());
  if (gone) throw new GoneError(gone);
  if (!row.storageKey) throw new NotFoundError('Export not found');
  await requireExportAllowed(deps.db, row.queryJobId);
  const file = exportFile(row.format, row.compression);
  const opened = await deps.storage.open(row.storageKey);
  return { ...opened, filename: `query-${row.queryJobId}.${file.extension}`, contentType: file.contentType };
}
