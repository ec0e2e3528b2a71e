/**
 * The handler of the `approval-mail` job: one notification e-mail to one person about one request,
 * composed from the records when it is sent. Queued in the transaction that creates or decides
 * the request, it is retried by the queue when the mail server fails, so that a failure never
 * fails or rolls back the request itself; a retry sends the same Message-ID.
 */
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { type MailEvent, requestCreatedMail, requestDecidedMail, type RequestView } from './messages.js';

export type { MailEvent } from './messages.js';

export const approvalMailPayload = z.object({
  approval_id: z.uuid(),
  event: z.enum(['created', 'approved', 'rejected']),
  recipient_id: z.uuid(),
});

export async function sendApprovalMail(
  deps: Pick<Deps, 'db' | 'notifier' | 'config'>,
  payload: z.output<typeof approvalMailPayload>,
): Promise<void> {
  const request = await deps.db.approvalRequest.findUnique({
    where: { id: payload.approval_id },
    include: {
      requester: { select: { name: true, email: true } },
      reviewer: { select: { name: true, email: true } },
      project: { select: { name: true, tenant: { select: { name: true } } } },
      reviewerTenant: { select: { name: true } },
      dataset: { select: { name: true } },
    },
  });
  const recipient = await deps.db.user.findFirst({ where: { id: payload.recipient_id, archivedAt: null } });
  // A recipient who left meanwhile gets nothing.
  if (!request || !recipient) return;
  const view: RequestView = {
    id: request.id,
    kind: request.kind,
    projectName: request.project.name,
    subjectName: request.kind === 'project_tenant' ? request.reviewerTenant.name : (request.dataset?.name ?? ''),
    projectTenantName: request.project.tenant.name,
    requesterName: request.requester.name,
    requesterEmail: request.requester.email,
    expiresAt: request.expiresAt,
    reviewerName: request.reviewer?.name ?? null,
    reviewerEmail: request.reviewer?.email ?? null,
    rejectionReason: request.rejectionReason,
  };
  const mail =
    payload.event === 'created'
      ? requestCreatedMail(view, reviewUrl(deps.config, request.id))
      : requestDecidedMail(view, payload.event);
  await deps.notifier.send({
    ...mail,
    to: recipient.email,
    messageId: messageId(payload.approval_id, payload.event, recipient.id),
  });
}

function messageId(approvalId: string, event: MailEvent, recipientId: string): string {
  return `approval-${approvalId}-${event}-${recipientId}@collab-api`;
}

/**
 * Where an Org admin reviews a request: its page of the web console, under COLLAB_PUBLIC_UI_URL
 * (the console's own address) or else under the service's public address, whose console is at
 * /console. The page asks for a token first when the tab has none, then shows the request.
 */
export function reviewUrl(
  config: Pick<Deps['config'], 'COLLAB_PUBLIC_UI_URL' | 'PUBLIC_BASE_URL' | 'PORT'>,
  approvalId: string,
): string {
  const consoleUrl = config.COLLAB_PUBLIC_UI_URL ?? `${config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`}/console`;
  return `${consoleUrl.replace(/\/+$/, '')}/approvals/${approvalId}`;
}
