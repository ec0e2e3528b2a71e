/**
 * The worker's side of an export (catalog entry `query-export`): the warehouse writes the stored
 * result (masked columns stay null) in the format asked for, into a local file that is then
 * streamed into object storage (DuckDB), or into object storage itself (BigQuery's extract jobs).
 * Killed at any step, the retry writes the same key again (the object is replaced whole), or finds
 * the export DONE; either way the file a killed attempt left in its work folder goes first.
 */
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { QueryFailure, type ResultColumn } from '../adapters/warehouse/query/index.js';
import type { Deps } from '../deps.js';
import { jobWorkDir } from '../paths.js';
import { resultsGone } from '../query-jobs/states.js';
import { exportFile, exportFolder } from './service.js';

export async function runExportJob(deps: Deps, exportId: string): Promise<void> {
  const folder = jobWorkDir(deps.config.DATA_DIR, `export-${exportId}`);
  // What a killed attempt left goes first, also when that attempt got as far as recording DONE.
  await rm(folder, { recursive: true, force: true });
  const row = await deps.db.queryExport.findUnique({ where: { id: exportId }, include: { job: true } });
  if (!row || (row.status !== 'PENDING' && row.status !== 'RUNNING')) return;
  // Results that expired while the export waited are deleted (or about to be): there is nothing to write.
  const gone = resultsGone(row.job.resultsExpireAt, deps.now());
  if (gone) {
    await failExport(deps, row.id, gone);
    return;
  }
  await deps.db.queryExport.update({ where: { id: row.id }, data: { status: 'RUNNING' } });
  const file = exportFile(row.format, row.compression);
  await mkdir(folder, { recursive: true });
  try {
    const local = path.join(folder, `export.${file.extension}`);
    const key = `${exportFolder(row)}/query-${row.queryJobId}.${file.extension}`;
    let written;
    try {
      written = await deps.queryEngine.exportResult(row.queryJobId, row.job.resultColumns as unknown as ResultColumn[], {
        format: row.format,
        compression: row.compression,
        file: local,
        key,
      });
    } catch (error) {
      if (error instanceof QueryFailure) {
        await failExport(deps, row.id, error.message);
        return;
      }
      throw error;
    }
    deps.crashPoint('query_export:written');
    if (written === 'local-file') {
      await deps.storage.putStream(key, createReadStream(local), { contentType: file.contentType });
    }
    deps.crashPoint('query_export:stored');
    await deps.db.queryExport.update({
      where: { id: row.id },
      data: { status: 'DONE', storageKey: key, completedAt: new Date() },
    });
    // Killed here, pg-boss retries an export that is DONE: it is turned away above.
    deps.crashPoint('query_export:done');
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function failExport(deps: Pick<Deps, 'db'>, exportId: string, message: string): Promise<void> {
  await deps.db.queryExport.update({
    where: { id: exportId },
    data: { status: 'FAILED', errorMessage: message, completedAt: new Date() },
  });
}

/** Out of retries: the export fails rather than staying RUNNING. */
export async function exportGaveUp(deps: Deps, exportId: string): Promise<void> {
  await rm(jobWorkDir(deps.config.DATA_DIR, `export-${exportId}`), { recursive: true, force: true });
  await failExport(deps, exportId, 'The export stopped before it finished, and its retries ran out');
}
