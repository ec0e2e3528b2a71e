/**
 * One approval request (/console/approvals/<id>, the link of the e-mail to the deciding Org
 * admins): the project, who asked, what would be shared, the expiry and the state; Approve or
 * Reject (with an optional reason) while it is pending and addressed to the caller's tenant; the
 * outcome once decided.
 */
import { $, api, ApiError, badge, fields, startPage, when } from '../session.js';
import { type AnyRequest, type Approval, type ApprovalLists, datasetRequest, tenantRequest } from './kinds.js';

interface Details {
  approval: Approval;
  project_tenant_details: {
    project_id: string;
    project_name: string;
    requester_name: string;
    requester_email: string;
    tenant_name: string;
  } | null;
  project_dataset_details: {
    project_id: string;
    project_name: string;
    requester_name: string;
    requester_email: string;
    dataset_name: string;
  } | null;
}

const approvalId = decodeURIComponent(location.pathname.replace(/\/+$/, '').split('/').at(-1) ?? '');

async function read(): Promise<AnyRequest> {
  const details = await api<Details>(`/api/v1/approval/${encodeURIComponent(approvalId)}`);
  if (details.project_tenant_details) return tenantRequest({ ...details.approval, ...details.project_tenant_details });
  return datasetRequest({ ...details.approval, ...details.project_dataset_details! });
}

function render(request: AnyRequest): void {
  $('request-title').textContent = `${request.kind}: ${request.project_name}`;
  $('request-summary').textContent = `${request.requester_name} asks: ${request.wouldShare}.`;
  fields($('request-fields'), [
    ['State', badge(request.status)],
    ['Project', request.project_name],
    ['Would share', request.wouldShare],
    ['Requested by', `${request.requester_name} <${request.requester_email}>`],
    ['Made', when(request.created_at)],
    ['Expires', when(request.expires_at)],
    ...(request.reviewed_at ? ([['Decided', when(request.reviewed_at)]] as [string, string][]) : []),
    ...(request.status === 'rejected' ? ([['Reason', request.rejection_reason ?? 'none given']] as [string, string][]) : []),
    ['Request id', request.id],
  ]);
}

const OUTCOME: Record<string, string> = {
  approved: 'Approved: the association is made, and the requester is e-mailed.',
  rejected: 'Rejected: the requester is e-mailed, with the reason if you gave one.',
  expired: 'This request expired before anyone decided it: the requester must make a new one.',
};

/** Whether the caller's tenant decides this request: it is among the tenant's pending ones. */
async function decidable(request: AnyRequest): Promise<boolean> {
  if (request.status !== 'pending') return false;
  const pending = await api<ApprovalLists>('/api/v1/approval/pending?limit=1000');
  return [...pending.project_tenant_approvals, ...pending.project_dataset_approvals].some((each) => each.id === request.id);
}

async function show(): Promise<void> {
  let request: AnyRequest;
  try {
    request = await read();
  } catch (error) {
    $('request-title').textContent = 'Request not shown';
    $('request-summary').textContent =
      error instanceof ApiError && error.status === 403
        ? 'Only Org admins see approval requests. Sign in with an Org admin’s token.'
        : error instanceof ApiError && (error.status === 404 || error.status === 422)
          ? 'No such request for your tenant: the link may be wrong, or meant for another tenant.'
          : error instanceof Error
            ? error.message
            : String(error);
    return;
  }
  render(request);
  const canDecide = await decidable(request);
  $('decision').hidden = !canDecide;
  if (!canDecide && request.status === 'pending')
    $('outcome').textContent = 'Pending: the Org admins of the other tenant decide this request.';
  else if (OUTCOME[request.status]) $('outcome').textContent = OUTCOME[request.status]!;
}

async function decide(action: 'approve' | 'reject'): Promise<void> {
  const buttons = [$<HTMLButtonElement>('approve'), $<HTMLButtonElement>('reject')];
  for (const button of buttons) button.disabled = true;
  try {
    const reason = $<HTMLTextAreaElement>('reason').value;
    await api(`/api/v1/approval/${encodeURIComponent(approvalId)}/${action}`, {
      method: 'POST',
      body: action === 'reject' ? { rejection_reason: reason } : undefined,
    });
    await show();
    $('outcome').focus();
  } catch (error) {
    await show().catch(() => undefined);
    $('outcome').textContent =
      `Not ${action === 'approve' ? 'approved' : 'rejected'}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

$('approve').addEventListener('click', () => void decide('approve'));
$('reject').addEventListener('click', () => void decide('reject'));
$('outcome').tabIndex = -1;
startPage(show);
