/**
 * The approvals page: for an Org admin, the requests addressed to the tenant that await a decision
 * (each links to its page); for everyone, the requests they made and their state.
 */
import { $, api, badge, el, row, startPage, when } from '../session.js';
import { allOf, type AnyRequest, type ApprovalLists } from './kinds.js';

function requestLink(request: AnyRequest): HTMLAnchorElement {
  return el('a', { text: request.kind, attrs: { href: `/console/approvals/${encodeURIComponent(request.id)}` } });
}

async function showPending(): Promise<void> {
  const pending = allOf(await api<ApprovalLists>('/api/v1/approval/pending?limit=1000')).sort((a, b) =>
    a.created_at.localeCompare(b.created_at),
  );
  $('pending-panel').hidden = false;
  $<HTMLTableElement>('pending').tBodies[0]!.replaceChildren(
    ...pending.map((request) =>
      row(
        requestLink(request),
        request.project_name,
        request.wouldShare,
        `${request.requester_name} <${request.requester_email}>`,
        when(request.expires_at),
      ),
    ),
  );
  $('pending-empty').hidden = pending.length > 0;
}

async function showMine(): Promise<void> {
  const mine = allOf(await api<ApprovalLists>('/api/v1/approval/mine?limit=1000')).sort((a, b) =>
    b.created_at.localeCompare(a.created_at),
  );
  $<HTMLTableElement>('mine').tBodies[0]!.replaceChildren(
    ...mine.map((request) =>
      row(
        request.kind,
        request.project_name,
        request.wouldShare,
        badge(request.status),
        when(request.created_at),
        when(request.reviewed_at),
        request.rejection_reason ?? '—',
      ),
    ),
  );
  $('mine-empty').hidden = mine.length > 0;
}

startPage(async (me) => {
  $('pending-panel').hidden = true;
  await Promise.all([me.role === 'Org admin' ? showPending() : Promise.resolve(), showMine()]);
});
