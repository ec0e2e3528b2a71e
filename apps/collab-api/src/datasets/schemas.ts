import { z } from 'zod';
import { archivedAt, description, displayName, idParams, timestamp } from '../shared/schemas.js';

export const datasetSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    created_at: timestamp,
    archived_at: archivedAt,
  })
  .meta({ id: 'Dataset' });

export type DatasetResponse = z.input<typeof datasetSchema>;

export const datasetList = z.object({ datasets: z.array(datasetSchema) }).meta({ id: 'DatasetList' });

export const datasetParams = idParams('dataset_id');

const name = displayName().meta({ description: 'Unique among the live datasets of the project, without regard to case' });

export const createDatasetBody = z.strictObject({
  name,
  description: description.nullish(),
  project_id: z.uuid(),
});

export type CreateDatasetInput = z.output<typeof createDatasetBody>;

export const updateDatasetBody = z.strictObject({
  name: name.nullish().meta({ description: 'Absent or null keeps the current name' }),
  description: description.nullish().meta({ description: 'Absent keeps the current description; null or "" removes it' }),
  project_id: z
    .uuid()
    .nullish()
    .meta({ description: "Moves the dataset to another project of the caller's tenant; absent or null keeps it" }),
});

export type UpdateDatasetInput = z.output<typeof updateDatasetBody>;
