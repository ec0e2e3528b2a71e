/**
 * The load job's handler (catalog entry `load-job`): loads the file into the table, all or
 * nothing, and records the outcome. The load takes the table's turn in the warehouse outbox
 * (src/warehouse-changes) for as long as the warehouse works, so that no other change of the
 * table runs meanwhile and the columns autodetect finds go into the records and the warehouse
 * together: recorded before the warehouse commits, made again or undone by the reconciler if the
 * process dies in between. The warehouse records each load's id in the load itself, so a retry
 * after a crash finds a load that was committed instead of loading twice.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { AppError } from '@repo/errors';
import { LocalObjectStorage } from '@repo/storage';
import type { Field, LoadResult, PreparedLoad, TableRef } from '../adapters/warehouse/index.js';
import { LoadFailure } from '../adapters/warehouse/index.js';
import type { Deps } from '../deps.js';
import type { LoadJob, Prisma, Table } from '../generated/prisma/client.js';
import type { JobContext } from '../jobs/catalog.js';
import { jobWorkDir } from '../paths.js';
import { lockLive } from '../shared/transaction.js';
import { fieldsOf, keepingPrivateFlags, sameFields, storedFields } from '../tables/fields.js';
import { ruleOf, ruleProblem } from '../tables/analysis-rule.js';
import { tableRef } from '../tables/plan.js';
import {
  addChange,
  applyChange,
  type ChangeDeps,
  type ChangePlan,
  extendLease,
  inTurn,
  requireNoChangeUnderWay,
} from '../warehouse-changes/index.js';
import { firstCsvRecord, firstRecordEnd, type FirstRecordScan, HEADER_PROBE_BYTES, isHeader } from './csv-header.js';

/** Thrown into the load when a cancel was asked for. */
class Cancelled extends Error {}

// How often a running load checks for a cancel (and keeps its turn in the outbox).
const WATCH_MS = 1000;

export async function runLoadJob(deps: Deps, loadJobId: string, context: JobContext): Promise<void> {
  const job = await deps.db.loadJob.findUnique({ where: { id: loadJobId } });
  // Ended meanwhile (cancelled, or given up by an earlier attempt's dead letter).
  if (job?.status !== 'Running') return;
  if (job.cancelRequestedAt) return finish(deps, job, { status: 'Cancelled' });
  const table = await deps.db.table.findFirst({ where: { id: job.tableId, archivedAt: null } });
  if (!table) return finish(deps, job, failed(new LoadFailure('The table was deleted; nothing was loaded')));
  const ref = tableRef(table);

  const committed = await deps.warehouse.findLoad(ref, job.id);
  if (committed) {
    // An earlier attempt loaded it and stopped before recording that.
    if (committed.fields) await adoptColumns(deps, table, committed.fields);
    return finish(deps, job, { status: 'Completed', result: committed });
  }

  let turn;
  try {
    turn = await takeTurn(deps, table);
  } catch (error) {
    if (error instanceof LoadFailure) return finish(deps, job, failed(error));
    throw error;
  }
  // The table as its turn found it: a PATCH before the turn (a column made private) is kept, and none comes during it.
  const { change, table: inTurnTable } = turn;
  const cancel = new AbortController();
  const signal = AbortSignal.any([cancel.signal, context.signal]);
  const watch = watchJob(deps, job, change.id, cancel);
  const workDir = jobWorkDir(deps.config.DATA_DIR, `load-${job.id}`);
  let result: LoadResult | undefined;
  try {
    await applyChange(changeDeps(deps), change, async () => {
      const prepared = await deps.warehouse.prepareLoad(tableRef(inTurnTable), {
        loadId: job.id,
        format: job.sourceFormat,
        disposition: job.writeDisposition,
        fields: fieldsOf(inTurnTable),
        autodetect: job.autodetect,
        csvHeader: job.sourceFormat === 'CSV' && !job.autodetect ? await headerOf(deps, job, inTurnTable) : undefined,
        source: { uri: job.sourceUri, localFile: () => localCopy(deps, job, workDir) },
        signal,
      });
      deps.crashPoint('load_job:prepared');
      result = await commitLoad(deps, inTurnTable, change.id, prepared, signal);
      deps.crashPoint('load_job:committed');
    });
  } catch (error) {
    if (cancel.signal.aborted) return finish(deps, job, { status: 'Cancelled' });
    // The worker is stopping, or lost the job: a retry picks it up.
    if (context.signal.aborted) throw error;
    if (error instanceof LoadFailure || error instanceof AppError) return finish(deps, job, failed(error));
    throw error;
  } finally {
    watch.stop();
    await rm(workDir, { recursive: true, force: true });
  }
  await finish(deps, job, { status: 'Completed', result: result! });
}

/**
 * After the last attempt failed, or its process stopped: the job fails, unless the warehouse
 * has its load (committed just before the process stopped).
 */
export async function loadJobGaveUp(deps: Deps, loadJobId: string, reason: string): Promise<void> {
  const job = await deps.db.loadJob.findUnique({ where: { id: loadJobId } });
  if (job?.status !== 'Running') return;
  const table = await deps.db.table.findFirst({ where: { id: job.tableId, archivedAt: null } });
  const committed = table && (await deps.warehouse.findLoad(tableRef(table), job.id));
  if (table && committed) {
    if (committed.fields) await adoptColumns(deps, table, committed.fields);
    return finish(deps, job, { status: 'Completed', result: committed });
  }
  // The reason is the last attempt's error: logged, not shown (it may name the service's own code and database).
  deps.logger.warn({ loadJobId, reason }, 'load job out of retries');
  const failure = new LoadFailure(
    'The load stopped before it finished and was tried again until the retries ran out; nothing was loaded',
  );
  await finish(deps, job, failed(failure));
}

type Outcome =
  | { status: 'Completed'; result: LoadResult }
  | { status: 'Failed'; details: { message: string; problems: LoadFailure['problems']; problem_count: number } }
  | { status: 'Cancelled' };

function failed(error: LoadFailure | AppError): Outcome {
  const problems = error instanceof LoadFailure ? error.problems : [];
  const count = error instanceof LoadFailure ? error.problemCount : 0;
  return { status: 'Failed', details: { message: error.message, problems, problem_count: count } };
}

/** Ends the job (if it still runs) and frees its table for the next one; its duration counts from its start. */
async function finish(deps: Deps, job: LoadJob, outcome: Outcome): Promise<void> {
  const endedAt = new Date();
  await deps.db.loadJob.updateMany({
    where: { id: job.id, status: 'Running' },
    data: {
      status: outcome.status,
      runningTableId: null,
      endedAt,
      durationMs: endedAt.getTime() - (job.startedAt ?? endedAt).getTime(),
      rowsLoaded: outcome.status === 'Completed' ? outcome.result.rowsLoaded : 0,
      bytesProcessed: outcome.status === 'Completed' ? outcome.result.bytesProcessed : null,
      ...(outcome.status === 'Failed' ? { errorDetails: outcome.details as unknown as Prisma.InputJsonObject } : {}),
    },
  });
  deps.logger.info({ loadJobId: job.id, status: outcome.status }, 'load job ended');
}

/**
 * The table's turn in the outbox: a change whose plan leaves the columns as they are (all a
 * reconciler may do if the process stops before the load changes them), waiting while another
 * change of the table or its dataset is under way; with the table as read under its lock.
 */
async function takeTurn(deps: Deps, table: Table) {
  const tenant = { tenantId: table.tenantId };
  return inTurn(deps.db, 'A change of this table', async (tx) => {
    await lockLive(tx, 'tables', tenant, table.id, 'update');
    const current = await tx.table.findFirst({ where: { id: table.id, archivedAt: null } });
    if (!current) throw new LoadFailure('The table was deleted; nothing was loaded');
    await requireNoChangeUnderWay(tx, { changing: table.id, relyingOn: [table.datasetId] });
    const fields = fieldsOf(current);
    const change = await addChange(
      tx,
      {
        kind: 'update_table',
        tenantId: table.tenantId,
        recordId: table.id,
        involves: [table.datasetId],
        plan: keepColumns(tableRef(current), fields, fields),
        previous: { name: current.name, datasetId: current.datasetId, schema: fields },
      },
      deps.config.COLLAB_WAREHOUSE_LEASE_SECONDS,
    );
    return { change, table: current };
  });
}

function keepColumns(table: TableRef, from: Field[], to: Field[]): ChangePlan {
  return { op: 'update_table', table, update: { schema: { from, to } } };
}

/**
 * Commits the load. Columns autodetect found (keeping the private flags of the table's columns
 * of the same names) go into the table's record (and the change's plan) first:
 * should the process stop after the warehouse committed, the reconciler then finds the warehouse
 * as the records say; before, it changes the columns as a PATCH would, or undoes them.
 */
async function commitLoad(
  deps: Deps,
  table: Table,
  changeId: string,
  prepared: PreparedLoad,
  signal: AbortSignal,
): Promise<LoadResult> {
  const before = fieldsOf(table);
  const found = prepared.fields && keepingPrivateFlags(prepared.fields, before);
  const rule = ruleOf(table);
  const problem = found && rule && ruleProblem(rule, found);
  if (problem) {
    await prepared.abort();
    throw new LoadFailure(
      `The columns this load found do not fit the table's analysis rule: ${problem}. Nothing was loaded: change or remove the rule first, or load columns that keep it`,
    );
  }
  if (found && !sameFields(found, before)) await recordColumns(deps, table, changeId, before, found);
  if (signal.aborted) {
    await prepared.abort();
    throw signal.reason;
  }
  const result = await prepared.commit();
  // Known only now where the warehouse inferred them while loading (BigQuery).
  const inferred = !prepared.fields && result.fields && keepingPrivateFlags(result.fields, before);
  if (inferred && !sameFields(inferred, before)) await recordColumns(deps, table, changeId, before, inferred);
  return result;
}

async function recordColumns(deps: Deps, table: Table, changeId: string, from: Field[], to: Field[]): Promise<void> {
  await deps.db.$transaction([
    deps.db.table.update({ where: { id: table.id }, data: { schema: storedFields(to) } }),
    deps.db.warehouseChange.update({
      where: { id: changeId },
      data: { plan: keepColumns(tableRef(table), from, to) as unknown as Prisma.InputJsonObject },
    }),
  ]);
}

/** The columns a load committed by an earlier attempt gave the table, taken into the record in the table's turn (flags kept). */
async function adoptColumns(deps: Deps, table: Table, fields: Field[]): Promise<void> {
  await inTurn(deps.db, 'A change of this table', async (tx) => {
    await lockLive(tx, 'tables', { tenantId: table.tenantId }, table.id, 'update');
    await requireNoChangeUnderWay(tx, { changing: table.id });
    const current = await tx.table.findFirst({ where: { id: table.id, archivedAt: null } });
    if (!current) return;
    const kept = keepingPrivateFlags(fields, fieldsOf(current));
    await tx.table.updateMany({ where: { id: table.id, archivedAt: null }, data: { schema: storedFields(kept) } });
  });
}

/**
 * While the load runs: keeps its turn in the outbox from being taken for interrupted, and aborts
 * it when a cancel is asked for.
 */
function watchJob(deps: Deps, job: LoadJob, changeId: string, cancel: AbortController): { stop(): void } {
  const leaseSeconds = deps.config.COLLAB_WAREHOUSE_LEASE_SECONDS;
  let lastExtended = Date.now();
  let busy = false;
  const timer = setInterval(
    () => {
      if (busy) return;
      busy = true;
      void (async () => {
        if (Date.now() - lastExtended >= (leaseSeconds * 1000) / 3) {
          await extendLease(deps.db, changeId, leaseSeconds);
          lastExtended = Date.now();
        }
        const current = await deps.db.loadJob.findUnique({ where: { id: job.id }, select: { cancelRequestedAt: true } });
        if (current?.cancelRequestedAt && !cancel.signal.aborted) cancel.abort(new Cancelled('The job was cancelled'));
      })()
        .catch((error: unknown) => deps.logger.warn({ err: error, loadJobId: job.id }, 'could not check on a running load'))
        .finally(() => (busy = false));
    },
    Math.min(WATCH_MS, (leaseSeconds * 1000) / 3),
  );
  return { stop: () => clearInterval(timer) };
}

/** The CSV file's first record when it names the table's columns (see csv-header.ts); undefined when it is data. */
async function headerOf(deps: Deps, job: LoadJob, table: Table): Promise<string[] | undefined> {
  const { stream } = await deps.storage.open(job.storageKey);
  const decoder = new StringDecoder('utf8');
  const scan: FirstRecordScan = { at: 0, quoted: false };
  let text = '';
  let end = -1;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      text += decoder.write(chunk);
      end = firstRecordEnd(text, scan);
      if (end >= 0 || text.length >= HEADER_PROBE_BYTES) break;
    }
  } finally {
    stream.destroy();
  }
  // Parsed once, when its end is known (or the file ended first).
  const record =
    end >= 0 && end < HEADER_PROBE_BYTES
      ? firstCsvRecord(text.slice(0, end + 1))
      : text.length < HEADER_PROBE_BYTES
        ? firstCsvRecord(text, true)
        : undefined;
  // Names as DuckDB's reader takes a header's: without the spaces around them.
  return record && isHeader(record, fieldsOf(table)) ? record.map((name) => name.trim()) : undefined;
}

/**
 * A local file of the object, for DuckDB: local storage's own (nothing is copied), or a copy of
 * the object from elsewhere.
 */
async function localCopy(deps: Deps, job: LoadJob, workDir: string): Promise<string> {
  if (deps.storage instanceof LocalObjectStorage) return deps.storage.filePath(job.storageKey);
  await mkdir(workDir, { recursive: true });
  const file = path.join(workDir, path.basename(job.storageKey));
  const { stream } = await deps.storage.open(job.storageKey);
  await pipeline(stream, createWriteStream(file));
  return file;
}

function changeDeps(deps: Deps): Pick<ChangeDeps, 'db' | 'warehouse' | 'crashPoint'> {
  return { db: deps.db, warehouse: deps.warehouse, crashPoint: deps.crashPoint };
}
