/**
 * The notification e-mails of approval requests, as pure functions of what they tell: a plain
 * text and an HTML part with the same content. Every name in them comes from users (projects,
 * datasets, tenants, people), so the HTML escapes each one, and the subject keeps to one line.
 */

export type MailEvent = 'created' | 'approved' | 'rejected';

/** What a message says about its request. */
export interface RequestView {
  id: string;
  kind: 'project_tenant' | 'project_dataset';
  projectName: string;
  /** The invited tenant's name, or the dataset's. */
  subjectName: string;
  /** The tenant that owns the project. */
  projectTenantName: string;
  requesterName: string;
  requesterEmail: string;
  expiresAt: Date;
  reviewerName: string | null;
  reviewerEmail: string | null;
  rejectionReason: string | null;
}

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
}

/** One paragraph: lines of text, each with its label. */
type Block = { label: string; value: string }[] | string;

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** A name in a subject line: control characters (line breaks among them) become spaces. */
function oneLine(value: string): string {
  return value.replace(/\p{Cc}+/gu, ' ').trim();
}

function askedFor(request: RequestView): string {
  return request.kind === 'project_tenant'
    ? `invite the tenant "${request.subjectName}" to the project "${request.projectName}"`
    : `add the dataset "${request.subjectName}" to the project "${request.projectName}" (of the tenant "${request.projectTenantName}")`;
}

function compose(subject: string, blocks: Block[], link?: { label: string; url: string }): ComposedMail {
  const text = blocks
    .map((block) => (typeof block === 'string' ? block : block.map(({ label, value }) => `${label}: ${value}`).join('\n')))
    .concat(link ? [`${link.label}: ${link.url}`] : [])
    .join('\n\n');
  const html = [
    '<!DOCTYPE html><html><body style="font-family: sans-serif">',
    ...blocks.map((block) =>
      typeof block === 'string'
        ? `<p>${escapeHtml(block)}</p>`
        : `<table>${block
            .map(({ label, value }) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`)
            .join('')}</table>`,
    ),
    ...(link ? [`<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>`] : []),
    '</body></html>',
  ].join('\n');
  return { subject: oneLine(subject), text: `${text}\n`, html };
}

/** To each Org admin of the tenant a new request is addressed to. */
export function requestCreatedMail(request: RequestView, reviewUrl: string): ComposedMail {
  const what = request.kind === 'project_tenant' ? 'Invitation to a project' : 'Request for a dataset';
  return compose(
    `${what}: ${request.projectName}`,
    [
      `${request.requesterName} (${request.requesterEmail}) asks to ${askedFor(request)}. As an Org admin of your tenant you may approve or reject the request.`,
      [
        { label: 'Request', value: request.id },
        { label: 'Project', value: request.projectName },
        { label: request.kind === 'project_tenant' ? 'Tenant invited' : 'Dataset', value: request.subjectName },
        { label: 'Requested by', value: `${request.requesterName} <${request.requesterEmail}>` },
        { label: 'Expires', value: request.expiresAt.toISOString() },
      ],
      `Unless it is approved or rejected before ${request.expiresAt.toISOString()}, the request expires and a new one is needed.`,
    ],
    { label: 'Review the request', url: reviewUrl },
  );
}

/** To the requester, once the request is approved or rejected. */
export function requestDecidedMail(request: RequestView, decision: 'approved' | 'rejected'): ComposedMail {
  const reviewer = request.reviewerName ? `${request.reviewerName} <${request.reviewerEmail ?? ''}>` : 'an Org admin';
  const facts = [
    { label: 'Request', value: request.id },
    { label: 'Decision', value: decision },
    { label: 'Reviewed by', value: reviewer },
  ];
  if (decision === 'approved') {
    const next =
      request.kind === 'project_tenant'
        ? `Next steps: the users of "${request.subjectName}" now find the project "${request.projectName}" among their projects, can list its datasets, and create and run queries in it.`
        : `Next steps: queries of the project "${request.projectName}" can now read the dataset "${request.subjectName}"; it is listed among the project's datasets.`;
    return compose(`Approved: ${request.projectName}`, [`Your request to ${askedFor(request)} was approved.`, facts, next]);
  }
  return compose(`Rejected: ${request.projectName}`, [
    `Your request to ${askedFor(request)} was rejected.`,
    [...facts, { label: 'Reason', value: request.rejectionReason ?? 'none given' }],
    'You may create a new request once what stood in the way is settled.',
  ]);
}
