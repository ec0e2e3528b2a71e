import { NotFoundError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import type { Warehouse } from '../adapters/warehouse/index.js';
import type { Database, Transaction } from '../database.js';
import { findDataset } from '../datasets/service.js';
import type { Table } from '../generated/prisma/client.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { lockLive, type ParentLock, withWarehouse } from '../shared/transaction.js';
import { archiveTables } from './archive.js';
import { fieldsOf, storedFields } from './fields.js';
import { mirrorTableUpdate, tableRef } from './mirror.js';
import type { CreateTableInput, TableResponse, UpdateTableInput } from './schemas.js';

type TableDeps = { db: Database; warehouse: Warehouse };

function toTableResponse(table: Table): TableResponse {
  return {
    id: table.id,
    tenant_id: table.tenantId,
    dataset_id: table.datasetId,
    name: table.name,
    schema: fieldsOf(table),
    created_at: iso(table.createdAt),
    archived_at: isoOrNull(table.archivedAt),
  };
}

const nameTaken = (name: string) => `The dataset already has a table named "${name}"`;

/** Creates the table in a live dataset of the actor's tenant (404 otherwise), and in the warehouse. */
export function createTable(deps: TableDeps, actor: Actor, input: CreateTableInput): Promise<TableResponse> {
  return withWarehouse(deps.db, async (tx) => {
    const dataset = await findDataset(tx, actor, input.dataset_id, 'share');
    const table = await conflictOnDuplicate(
      tx.table.create({
        data: {
          tenantId: actor.tenantId,
          datasetId: dataset.id,
          name: input.name,
          liveName: input.name.toLowerCase(),
          schema: storedFields(input.schema),
        },
      }),
      ['dataset_id', 'live_name'],
      nameTaken(input.name),
    );
    await deps.warehouse.createTable(tableRef(table), input.schema, { friendlyName: table.name });
    return toTableResponse(table);
  });
}

export async function listTables(db: Database, actor: Actor, page: ListOptions): Promise<{ tables: TableResponse[] }> {
  return { tables: (await db.table.findMany({ where: liveIn(actor), ...oldestFirst(page) })).map(toTableResponse) };
}

export async function listDatasetTables(
  db: Database,
  actor: Actor,
  datasetId: string,
  page: ListOptions,
): Promise<{ tables: TableResponse[] }> {
  const dataset = await findDataset(db, actor, datasetId);
  return {
    tables: (await db.table.findMany({ where: { datasetId: dataset.id, ...liveIn(actor) }, ...oldestFirst(page) })).map(
      toTableResponse,
    ),
  };
}

export async function getTable(db: Database, actor: Actor, tableId: string): Promise<TableResponse> {
  return toTableResponse(await findTable(db, actor, tableId));
}

/** Renames the table, changes its columns, or moves it to another live dataset of the actor's tenant (404 otherwise). */
export function updateTable(deps: TableDeps, actor: Actor, tableId: string, input: UpdateTableInput): Promise<TableResponse> {
  return withWarehouse(deps.db, async (tx) => {
    const table = await findTable(tx, actor, tableId);
    const datasetId = input.dataset_id ?? table.datasetId;
    if (datasetId !== table.datasetId) await findDataset(tx, actor, datasetId, 'share');
    const name = input.name ?? table.name;
    const updated = await conflictOnDuplicate(
      tx.table.update({
        where: { id: table.id },
        data: { name, liveName: name.toLowerCase(), datasetId, schema: input.schema ? storedFields(input.schema) : undefined },
      }),
      ['dataset_id', 'live_name'],
      nameTaken(name),
    );
    await mirrorTableUpdate(deps.warehouse, table, updated);
    return toTableResponse(updated);
  });
}

/** Archives the table with its jobs, and drops it from the warehouse. */
export function archiveTable(deps: TableDeps, actor: Actor, tableId: string): Promise<void> {
  return withWarehouse(deps.db, async (tx) => {
    const table = await findTable(tx, actor, tableId, 'update');
    await archiveTables(tx, actor, { id: table.id });
    await deps.warehouse.deleteTable(tableRef(table));
  });
}

/** The live table of the actor's tenant, or 404; with `lock`, held until the transaction `db` ends. */
export async function findTable(db: Database | Transaction, actor: Actor, tableId: string, lock?: ParentLock): Promise<Table> {
  if (lock) await lockLive(db, 'tables', actor, tableId, lock);
  const table = await db.table.findFirst({ where: { id: tableId, ...liveIn(actor) } });
  if (!table) throw new NotFoundError('Table not found');
  return table;
}
