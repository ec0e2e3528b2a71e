import { z } from 'zod';
import { archivedAt, description, displayName, idParams, timestamp } from '../shared/schemas.js';

export const datasetSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    project_id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    share_policy: z
      .object({
        allow_exports: z.boolean().meta({
          description: 'Whether other tenants may export (and download) the results of their jobs that read this dataset',
        }),
      })
      .meta({ id: 'SharePolicy', description: "The owner's policy for the tenants it shares the dataset with" }),
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
  share_policy: z.strictObject({ allow_exports: z.boolean() }).nullish().meta({
    description:
      "allow_exports false: exports and download URLs of other tenants' jobs that read the dataset answer 403 (default true); absent or null keeps the policy",
  }),
});

export type UpdateDatasetInput = z.output<typeof updateDatasetBody>;
