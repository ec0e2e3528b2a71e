import { NotFoundError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import type { Warehouse, WarehouseMetadata } from '../adapters/warehouse/index.js';
import type { Database, Transaction } from '../database.js';
import type { Dataset } from '../generated/prisma/client.js';
import { findProject } from '../projects/service.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { lockLive, type ParentLock, withWarehouse } from '../shared/transaction.js';
import { archiveTables } from '../tables/archive.js';
import type { CreateDatasetInput, DatasetResponse, UpdateDatasetInput } from './schemas.js';

type DatasetDeps = { db: Database; warehouse: Warehouse };

function toDatasetResponse(dataset: Dataset): DatasetResponse {
  return {
    id: dataset.id,
    tenant_id: dataset.tenantId,
    project_id: dataset.projectId,
    name: dataset.name,
    description: dataset.description,
    created_at: iso(dataset.createdAt),
    archived_at: isoOrNull(dataset.archivedAt),
  };
}

const nameTaken = (name: string) => `The project already has a dataset named "${name}"`;

/** Creates the dataset in a live project of the actor's tenant (404 otherwise), and in the warehouse. */
export function createDataset(deps: DatasetDeps, actor: Actor, input: CreateDatasetInput): Promise<DatasetResponse> {
  return withWarehouse(deps.db, async (tx) => {
    const project = await findProject(tx, actor, input.project_id, 'share');
    const dataset = await conflictOnDuplicate(
      tx.dataset.create({
        data: {
          tenantId: actor.tenantId,
          projectId: project.id,
          name: input.name,
          liveName: input.name.toLowerCase(),
          description: input.description ?? null,
        },
      }),
      ['project_id', 'live_name'],
      nameTaken(input.name),
    );
    await deps.warehouse.createDataset(dataset.id, { friendlyName: dataset.name, description: dataset.description ?? undefined });
    return toDatasetResponse(dataset);
  });
}

export async function listDatasets(db: Database, actor: Actor, page: ListOptions): Promise<{ datasets: DatasetResponse[] }> {
  return { datasets: (await db.dataset.findMany({ where: liveIn(actor), ...oldestFirst(page) })).map(toDatasetResponse) };
}

export async function listProjectDatasets(
  db: Database,
  actor: Actor,
  projectId: string,
  page: ListOptions,
): Promise<{ datasets: DatasetResponse[] }> {
  const project = await findProject(db, actor, projectId);
  return {
    datasets: (await db.dataset.findMany({ where: { projectId: project.id, ...liveIn(actor) }, ...oldestFirst(page) })).map(
      toDatasetResponse,
    ),
  };
}

export async function getDataset(db: Database, actor: Actor, datasetId: string): Promise<DatasetResponse> {
  return toDatasetResponse(await findDataset(db, actor, datasetId));
}

/**
 * Renames, describes or moves the dataset to another live project of the actor's tenant (404
 * otherwise). The warehouse gets the new name and description; its own name for the dataset
 * comes from the id and never changes.
 */
export function updateDataset(
  deps: DatasetDeps,
  actor: Actor,
  datasetId: string,
  input: UpdateDatasetInput,
): Promise<DatasetResponse> {
  return withWarehouse(deps.db, async (tx) => {
    const dataset = await findDataset(tx, actor, datasetId);
    const projectId = input.project_id ?? dataset.projectId;
    if (projectId !== dataset.projectId) await findProject(tx, actor, projectId, 'share');
    const name = input.name ?? dataset.name;
    const updated = await conflictOnDuplicate(
      tx.dataset.update({
        where: { id: dataset.id },
        data: { name, liveName: name.toLowerCase(), description: input.description, projectId },
      }),
      ['project_id', 'live_name'],
      nameTaken(name),
    );
    const metadata = changedMetadata(dataset, updated);
    if (metadata) await deps.warehouse.updateDataset(dataset.id, metadata);
    return toDatasetResponse(updated);
  });
}

/** Archives the dataset with its tables (and their jobs), and deletes it from the warehouse. */
export function archiveDataset(deps: DatasetDeps, actor: Actor, datasetId: string): Promise<void> {
  return withWarehouse(deps.db, async (tx) => {
    const dataset = await findDataset(tx, actor, datasetId, 'update');
    const now = new Date();
    await archiveTables(tx, actor, { datasetId: dataset.id }, now);
    await tx.dataset.update({ where: { id: dataset.id }, data: { archivedAt: now, liveName: null } });
    await deps.warehouse.deleteDataset(dataset.id);
  });
}

/** The live dataset of the actor's tenant, or 404; with `lock`, held until the transaction `db` ends. */
export async function findDataset(
  db: Database | Transaction,
  actor: Actor,
  datasetId: string,
  lock?: ParentLock,
): Promise<Dataset> {
  if (lock) await lockLive(db, 'datasets', actor, datasetId, lock);
  const dataset = await db.dataset.findFirst({ where: { id: datasetId, ...liveIn(actor) } });
  if (!dataset) throw new NotFoundError('Dataset not found');
  return dataset;
}

/** What the warehouse keeps of a dataset that changed: its name and description. */
function changedMetadata(before: Dataset, after: Dataset): WarehouseMetadata | undefined {
  const metadata: WarehouseMetadata = {};
  if (after.name !== before.name) metadata.friendlyName = after.name;
  if (after.description !== before.description) metadata.description = after.description;
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}
