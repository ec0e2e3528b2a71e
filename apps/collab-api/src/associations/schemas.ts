import { z } from 'zod';
import { idParams, timestamp } from '../shared/schemas.js';

export const projectTenantSchema = z
  .object({
    project_id: z.uuid(),
    tenant_id: z.uuid().meta({ description: 'The invited tenant' }),
    tenant_name: z.string(),
    created_at: timestamp.meta({ description: 'When the invitation was approved' }),
  })
  .meta({ id: 'ProjectTenant' });

export type ProjectTenantResponse = z.input<typeof projectTenantSchema>;

export const projectTenantList = z.object({ tenants: z.array(projectTenantSchema) }).meta({ id: 'ProjectTenantList' });

export const projectTenantParams = idParams('project_id', 'tenant_id');

export const sharedDatasetParams = idParams('project_id', 'dataset_id');
