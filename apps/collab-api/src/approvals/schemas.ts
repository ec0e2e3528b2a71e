import { z } from 'zod';
import { idParams, timestamp } from '../shared/schemas.js';

const status = z.enum(['pending', 'approved', 'rejected', 'expired']);

/** The fields of every approval request (and the `approval` of its details). */
const approvalFields = {
  id: z.uuid(),
  status,
  requested_by: z.uuid(),
  reviewed_by: z.uuid().nullable(),
  created_at: timestamp,
  expires_at: timestamp.meta({ description: 'Created plus 15 days; a request still pending then expires' }),
  reviewed_at: timestamp.nullable(),
  rejection_reason: z.string().nullable(),
};

const requestFields = {
  ...approvalFields,
  project_id: z.uuid(),
  project_name: z.string(),
  requester_name: z.string(),
  requester_email: z.string(),
};

export const projectTenantApprovalSchema = z
  .object({
    ...requestFields,
    tenant_id: z.uuid().meta({ description: 'The invited tenant' }),
    tenant_name: z.string(),
  })
  .meta({ id: 'ProjectTenantApproval' });

export const projectDatasetApprovalSchema = z
  .object({
    ...requestFields,
    dataset_id: z.uuid(),
    dataset_name: z.string(),
  })
  .meta({ id: 'ProjectDatasetApproval' });

export type ProjectTenantApproval = z.input<typeof projectTenantApprovalSchema>;
export type ProjectDatasetApproval = z.input<typeof projectDatasetApprovalSchema>;

export const pendingApprovals = z
  .object({
    project_tenant_approvals: z.array(projectTenantApprovalSchema),
    project_dataset_approvals: z.array(projectDatasetApprovalSchema),
  })
  .meta({ id: 'PendingApprovals' });

export const myApprovals = z
  .object({
    project_tenant_approvals: z.array(projectTenantApprovalSchema),
    project_dataset_approvals: z.array(projectDatasetApprovalSchema),
  })
  .meta({ id: 'MyApprovals' });

const requesterFields = {
  project_id: z.uuid(),
  project_name: z.string(),
  requester_name: z.string(),
  requester_email: z.string(),
};

export const approvalDetails = z
  .object({
    approval: z.object(approvalFields).meta({ id: 'Approval' }),
    project_tenant_details: z
      .object({ ...requesterFields, tenant_id: z.uuid(), tenant_name: z.string() })
      .nullable()
      .meta({ description: 'Set for a project-tenant request, null otherwise' }),
    project_dataset_details: z
      .object({ ...requesterFields, dataset_id: z.uuid(), dataset_name: z.string() })
      .nullable()
      .meta({ description: 'Set for a project-dataset request, null otherwise' }),
  })
  .meta({ id: 'ApprovalDetails' });

export type ApprovalDetails = z.input<typeof approvalDetails>;

export const projectTenantRequestBody = z.strictObject({
  project_id: z.uuid(),
  tenant_id: z.uuid().meta({ description: 'The tenant invited to the project' }),
});

export const projectDatasetRequestBody = z.strictObject({
  project_id: z.uuid(),
  dataset_id: z.uuid().meta({ description: 'A dataset of another tenant, invited to the project already' }),
});

export const rejectBody = z
  .strictObject({
    rejection_reason: z
      .string()
      .max(2000)
      .transform((value) => (value.trim() === '' ? null : value))
      .nullish()
      .meta({ description: 'Sent to the requester; absent, null or "" gives none' }),
  })
  .optional();

export const approvalParams = idParams('id');
export const approvalDetailsParams = idParams('approval_id');

export const expireQuery = z.strictObject({
  internal_token: z.string().optional().meta({ description: 'COLLAB_INTERNAL_TOKEN; missing or wrong: 401' }),
});

/** The body of approve, reject and expire. */
export const emptyObject = z.strictObject({});
