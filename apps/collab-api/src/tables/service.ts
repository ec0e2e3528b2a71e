import { NotFoundError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import type { Field } from '../adapters/warehouse/index.js';
import type { Database, Transaction } from '../database.js';
import { sharedWith } from '../associations/access.js';
import { findDataset } from '../datasets/service.js';
import type { Table } from '../generated/prisma/client.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { lockLive, type ParentLock } from '../shared/transaction.js';
import {
  addChange,
  applyChange,
  type ChangeDeps,
  inTurn,
  nameKey,
  requireNameNotHeld,
  requireNoChangeUnderWay,
} from '../warehouse-changes/index.js';
import { ruleOf } from './analysis-rule.js';
import { fieldsOf } from './fields.js';
import { planTableUpdate, tableData, tableRef } from './plan.js';
import type { CreateTableInput, TableResponse, UpdateTableInput } from './schemas.js';

/** The columns are given apart: a row just written is not read back with them (a megabyte for 10,000). */
function toTableResponse(table: Omit<Table, 'schema'>, columns: Field[]): TableResponse {
  return {
    id: table.id,
    tenant_id: table.tenantId,
    dataset_id: table.datasetId,
    name: table.name,
    schema: columns,
    analysis_rule: ruleOf(table),
    created_at: iso(table.createdAt),
    archived_at: isoOrNull(table.archivedAt),
  };
}

const nameTaken = (name: string) => `The dataset already has a table named "${name}"`;
const BUSY = 'Another change of this table, of its dataset or of a table of that name';

/** Creates the table in a live dataset of the actor's tenant (404 otherwise), and in the warehouse. */
export async function createTable(deps: ChangeDeps, actor: Actor, input: CreateTableInput): Promise<TableResponse> {
  const { table, change } = await inTurn(deps.db, 'A change of the dataset or of a table of that name', async (tx) => {
    const dataset = await findDataset(tx, actor, input.dataset_id, 'share');
    await requireNoChangeUnderWay(tx, { relyingOn: [dataset.id] });
    const table = await conflictOnDuplicate(
      tx.table.create({
        data: { tenantId: actor.tenantId, ...tableData({ name: input.name, datasetId: dataset.id, schema: input.schema }) },
        omit: { schema: true },
      }),
      ['dataset_id', 'live_name'],
      nameTaken(input.name),
    );
    await requireNameNotHeld(tx, nameKey(dataset.id, table.name));
    const change = await addChange(
      tx,
      {
        kind: 'create_table',
        tenantId: actor.tenantId,
        recordId: table.id,
        involves: [dataset.id],
        plan: { op: 'create_table', table: tableRef(table), fields: input.schema, metadata: { friendlyName: table.name } },
      },
      deps.leaseSeconds,
    );
    return { table, change };
  });
  await applyChange(deps, change);
  return toTableResponse(table, input.schema);
}

export async function listTables(db: Database, actor: Actor, page: ListOptions): Promise<{ tables: TableResponse[] }> {
  return {
    tables: (await db.table.findMany({ where: liveIn(actor), ...oldestFirst(page) })).map((table) =>
      toTableResponse(table, fieldsOf(table)),
    ),
  };
}

/**
 * The live tables of a dataset of the actor's tenant, or of another tenant's dataset shared into
 * a project the actor's tenant reaches (their schemas and rules; 404 otherwise).
 */
export async function listDatasetTables(
  db: Database,
  actor: Actor,
  datasetId: string,
  page: ListOptions,
): Promise<{ tables: TableResponse[] }> {
  const dataset = await db.dataset.findFirst({
    where: { id: datasetId, OR: [liveIn(actor), sharedWith(actor.tenantId)] },
    select: { id: true },
  });
  if (!dataset) throw new NotFoundError('Dataset not found');
  return {
    tables: (await db.table.findMany({ where: { datasetId: dataset.id, archivedAt: null }, ...oldestFirst(page) })).map((table) =>
      toTableResponse(table, fieldsOf(table)),
    ),
  };
}

/** A live table of the actor's tenant, or of another tenant's dataset shared with it (see listDatasetTables); 404 otherwise. */
export async function getTable(db: Database, actor: Actor, tableId: string): Promise<TableResponse> {
  const table = await db.table.findFirst({
    where: { id: tableId, archivedAt: null, OR: [{ tenantId: actor.tenantId }, { dataset: sharedWith(actor.tenantId) }] },
  });
  if (!table) throw new NotFoundError('Table not found');
  return toTableResponse(table, fieldsOf(table));
}

/**
 * Renames the table, changes its columns, or moves it to another live dataset of the actor's
 * tenant (404 otherwise), from its row read under lock once the changes before it have ended.
 */
export async function updateTable(
  deps: ChangeDeps,
  actor: Actor,
  tableId: string,
  input: UpdateTableInput,
): Promise<TableResponse> {
  const { updated, change, columns } = await inTurn(deps.db, BUSY, async (tx) => {
    const table = await findTable(tx, actor, tableId, 'update');
    const update = planTableUpdate(table, input);
    const datasets = [...new Set([table.datasetId, update.after.datasetId])];
    // The dataset it moves to, and the one it leaves (which gets it back if the warehouse refuses the move).
    for (const datasetId of datasets) await findDataset(tx, actor, datasetId, 'share');
    await requireNoChangeUnderWay(tx, { changing: table.id, relyingOn: datasets });
    const updated = await conflictOnDuplicate(
      tx.table.update({ where: { id: table.id }, data: tableData(update.after), omit: { schema: true } }),
      ['dataset_id', 'live_name'],
      nameTaken(update.after.name),
    );
    if (update.names) await requireNameNotHeld(tx, update.names.taken);
    const change =
      update.plan &&
      (await addChange(
        tx,
        {
          kind: 'update_table',
          tenantId: actor.tenantId,
          recordId: table.id,
          involves: datasets,
          heldName: update.names?.freed,
          plan: update.plan,
          previous: update.before,
        },
        deps.leaseSeconds,
      ));
    return { updated, change, columns: update.after.schema };
  });
  if (change) await applyChange(deps, change);
  return toTableResponse(updated, columns);
}

/**
 * Drops the table from the warehouse, then archives it with its jobs. It stays live until the
 * warehouse has dropped it, and keeps it when the warehouse refuses.
 */
export async function archiveTable(deps: ChangeDeps, actor: Actor, tableId: string): Promise<void> {
  const change = await inTurn(deps.db, BUSY, async (tx) => {
    const table = await findTable(tx, actor, tableId, 'update');
    await lockLive(tx, 'datasets', actor, table.datasetId, 'share');
    await requireNoChangeUnderWay(tx, { changing: table.id, relyingOn: [table.datasetId] });
    return addChange(
      tx,
      {
        kind: 'delete_table',
        tenantId: actor.tenantId,
        recordId: table.id,
        involves: [table.datasetId],
        plan: { op: 'delete_table', table: tableRef(table) },
      },
      deps.leaseSeconds,
    );
  });
  await applyChange(deps, change);
}

/** The live table of the actor's tenant, or 404; with `lock`, held until the transaction `db` ends. */
export async function findTable(db: Database | Transaction, actor: Actor, tableId: string, lock?: ParentLock): Promise<Table> {
  if (lock) await lockLive(db, 'tables', actor, tableId, lock);
  const table = await db.table.findFirst({ where: { id: tableId, ...liveIn(actor) } });
  if (!table) throw new NotFoundError('Table not found');
  return table;
}
