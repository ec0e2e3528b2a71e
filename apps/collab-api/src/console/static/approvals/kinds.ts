/** Approval requests as the API gives them, and how the pages name what one would share. */

export interface Approval {
  id: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  requested_by: string;
  reviewed_by: string | null;
  created_at: string;
  expires_at: string;
  reviewed_at: string | null;
  rejection_reason: string | null;
}

export interface Requested {
  project_id: string;
  project_name: string;
  requester_name: string;
  requester_email: string;
}

export type TenantRequest = Approval & Requested & { tenant_id: string; tenant_name: string };
export type DatasetRequest = Approval & Requested & { dataset_id: string; dataset_name: string };

export interface ApprovalLists {
  project_tenant_approvals: TenantRequest[];
  project_dataset_approvals: DatasetRequest[];
}

/** One request of either kind, with what it would share said in words. */
export interface AnyRequest extends Approval, Requested {
  kind: 'Join a project' | 'Share a dataset';
  wouldShare: string;
}

export function tenantRequest(request: Approval & Requested & { tenant_name: string }): AnyRequest {
  return {
    ...request,
    kind: 'Join a project',
    wouldShare: `The tenant ${request.tenant_name} joins the project: its users see the project and its shared datasets, and run queries in it`,
  };
}

export function datasetRequest(request: Approval & Requested & { dataset_name: string }): AnyRequest {
  return {
    ...request,
    kind: 'Share a dataset',
    wouldShare: `The dataset ${request.dataset_name} is shared into the project: its queries read its tables, under the tables' analysis rules`,
  };
}

export function allOf(lists: ApprovalLists): AnyRequest[] {
  return [...lists.project_tenant_approvals.map(tenantRequest), ...lists.project_dataset_approvals.map(datasetRequest)];
}
