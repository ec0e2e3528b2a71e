/** The console's home: the pages, and for an Org admin how many requests await a decision. */
import { $, api, startPage } from './session.js';

interface Pending {
  project_tenant_approvals: unknown[];
  project_dataset_approvals: unknown[];
}

startPage(async (me) => {
  if (me.role !== 'Org admin') return;
  const pending = await api<Pending>('/api/v1/approval/pending?limit=1000');
  const count = pending.project_tenant_approvals.length + pending.project_dataset_approvals.length;
  $('home-approvals').textContent =
    count === 0
      ? 'No request awaits your decision.'
      : `${count} request${count === 1 ? '' : 's'} await${count === 1 ? 's' : ''} your decision.`;
});
