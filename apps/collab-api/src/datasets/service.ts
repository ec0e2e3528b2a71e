import { NotFoundError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import { datasetsOfProject, findReachableProject } from '../associations/access.js';
import type { Database, Transaction } from '../database.js';
import type { Dataset } from '../generated/prisma/client.js';
import { findProject } from '../projects/service.js';
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
import { datasetData, planDatasetUpdate } from './plan.js';
import type { CreateDatasetInput, DatasetResponse, UpdateDatasetInput } from './schemas.js';

function toDatasetResponse(dataset: Dataset): DatasetResponse {
  return {
    id: dataset.id,
    tenant_id: dataset.tenantId,
    project_id: dataset.projectId,
    name: dataset.name,
    description: dataset.description,
    share_policy: { allow_exports: dataset.allowExports },
    created_at: iso(dataset.createdAt),
    archived_at: isoOrNull(dataset.archivedAt),
  };
}

const nameTaken = (name: string) => `The project already has a dataset named "${name}"`;
const BUSY = 'Another change of this dataset, of its tables or of a dataset of that name';

/** Creates the dataset in a live project of the actor's tenant (404 otherwise), and in the warehouse. */
export async function createDataset(deps: ChangeDeps, actor: Actor, input: CreateDatasetInput): Promise<DatasetResponse> {
  const { dataset, change } = await inTurn(deps.db, 'A change of a dataset of that name', async (tx) => {
    const project = await findProject(tx, actor, input.project_id, 'share');
    const dataset = await conflictOnDuplicate(
      tx.dataset.create({
        data: {
          tenantId: actor.tenantId,
          ...datasetData({ name: input.name, description: input.description ?? null, projectId: project.id }),
        },
      }),
      ['project_id', 'live_name'],
      nameTaken(input.name),
    );
    await requireNameNotHeld(tx, nameKey(project.id, dataset.name));
    const change = await addChange(
      tx,
      {
        kind: 'create_dataset',
        tenantId: actor.tenantId,
        recordId: dataset.id,
        involves: [project.id],
        plan: {
          op: 'create_dataset',
          datasetId: dataset.id,
          metadata: { friendlyName: dataset.name, description: dataset.description ?? undefined },
        },
      },
      deps.leaseSeconds,
    );
    return { dataset, change };
  });
  await applyChange(deps, change);
  return toDatasetResponse(dataset);
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
  const { project } = await findReachableProject(db, actor, projectId);
  return {
    datasets: (await db.dataset.findMany({ where: datasetsOfProject(project.id), ...oldestFirst(page) })).map(toDatasetResponse),
  };
}

export async function getDataset(db: Database, actor: Actor, datasetId: string): Promise<DatasetResponse> {
  return toDatasetResponse(await findDataset(db, actor, datasetId));
}

/**
 * Renames, describes or moves the dataset to another live project of the actor's tenant (404
 * otherwise), from its row read under lock once the changes before it have ended. The warehouse
 * gets the new name and description.
 */
export async function updateDataset(
  deps: ChangeDeps,
  actor: Actor,
  datasetId: string,
  input: UpdateDatasetInput,
): Promise<DatasetResponse> {
  const { updated, change } = await inTurn(deps.db, BUSY, async (tx) => {
    const dataset = await findDataset(tx, actor, datasetId, 'update');
    const update = planDatasetUpdate(dataset, input);
    if (update.after.projectId !== dataset.projectId) {
      await findProject(tx, actor, update.after.projectId, 'share');
      // The project it leaves too: it gets the dataset back if the warehouse refuses the change.
      await lockLive(tx, 'projects', actor, dataset.projectId, 'share');
    }
    await requireNoChangeUnderWay(tx, { changing: dataset.id });
    const updated = await conflictOnDuplicate(
      tx.dataset.update({ where: { id: dataset.id }, data: datasetData(update.after) }),
      ['project_id', 'live_name'],
      nameTaken(update.after.name),
    );
    if (update.names) await requireNameNotHeld(tx, update.names.taken);
    const change =
      update.plan &&
      (await addChange(
        tx,
        {
          kind: 'update_dataset',
          tenantId: actor.tenantId,
          recordId: dataset.id,
          involves: [...new Set([dataset.projectId, updated.projectId])],
          heldName: update.names?.freed,
          plan: update.plan,
          previous: update.before,
        },
        deps.leaseSeconds,
      ));
    return { updated, change };
  });
  if (change) await applyChange(deps, change);
  return toDatasetResponse(updated);
}

/**
 * Deletes the dataset from the warehouse, then archives it with its tables (and their jobs). It
 * stays live until the warehouse has dropped it, and keeps it when the warehouse refuses.
 */
export async function archiveDataset(deps: ChangeDeps, actor: Actor, datasetId: string): Promise<void> {
  const change = await inTurn(deps.db, BUSY, async (tx) => {
    const dataset = await findDataset(tx, actor, datasetId, 'update');
    await requireNoChangeUnderWay(tx, { changing: dataset.id });
    return addChange(
      tx,
      {
        kind: 'delete_dataset',
        tenantId: actor.tenantId,
        recordId: dataset.id,
        involves: [dataset.projectId],
        plan: { op: 'delete_dataset', datasetId: dataset.id },
      },
      deps.leaseSeconds,
    );
  });
  await applyChange(deps, change);
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
