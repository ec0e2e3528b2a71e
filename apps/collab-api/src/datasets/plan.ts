import type { WarehouseMetadata } from '../adapters/warehouse/index.js';
import type { Dataset } from '../generated/prisma/client.js';
import { changedNames, type PlannedUpdate } from '../warehouse-changes/plan.js';
import type { UpdateDatasetInput } from './schemas.js';

/** The fields of a dataset that an update changes. */
export interface DatasetFields {
  name: string;
  description: string | null;
  projectId: string;
  /** Absent in changes recorded before datasets had a share policy. */
  allowExports?: boolean;
}

/** The columns a dataset's fields are stored in: `live_name` follows the name of a live dataset. */
export function datasetData(fields: DatasetFields) {
  return { ...fields, liveName: fields.name.toLowerCase() };
}

/**
 * A PATCH of a dataset, planned from its locked row. The warehouse keeps the name and the
 * description (its own name for the dataset comes from the id and never changes); a move to
 * another project and the share policy concern the records only.
 */
export function planDatasetUpdate(dataset: Dataset, input: UpdateDatasetInput): PlannedUpdate<DatasetFields> {
  const before: DatasetFields = {
    name: dataset.name,
    description: dataset.description,
    projectId: dataset.projectId,
    allowExports: dataset.allowExports,
  };
  const after: DatasetFields = {
    name: input.name ?? before.name,
    description: input.description === undefined ? before.description : input.description,
    projectId: input.project_id ?? before.projectId,
    allowExports: input.share_policy?.allow_exports ?? before.allowExports,
  };
  const metadata: WarehouseMetadata = {};
  if (after.name !== before.name) metadata.friendlyName = after.name;
  if (after.description !== before.description) metadata.description = after.description;
  return {
    before,
    after,
    plan: Object.keys(metadata).length > 0 ? { op: 'update_dataset', datasetId: dataset.id, metadata } : undefined,
    names: changedNames({ parentId: before.projectId, name: before.name }, { parentId: after.projectId, name: after.name }),
  };
}
