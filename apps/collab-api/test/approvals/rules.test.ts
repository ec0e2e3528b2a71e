import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '@repo/errors';
import { Role } from '../../src/access/index.js';
import { reviewUrl } from '../../src/approvals/mail.js';
import { escapeHtml, requestCreatedMail, requestDecidedMail, type RequestView } from '../../src/approvals/messages.js';
import {
  APPROVAL_LIFETIME_DAYS,
  associationKey,
  decide,
  expiring,
  expiryOf,
  isDue,
  requireForeignDataset,
  requireInternalToken,
  requireOtherTenant,
  requireReviewer,
  requireVisible,
  statusAt,
} from '../../src/approvals/rules.js';

const created = new Date('2026-11-01T10:00:00.000Z');
const expiresAt = expiryOf(created);
const before = new Date(expiresAt.getTime() - 1);

describe('lifetime', () => {
  it('is 15 days, due from the expiry instant on', () => {
    expect(APPROVAL_LIFETIME_DAYS).toBe(15);
    expect(expiresAt.toISOString()).toBe('2026-11-16T10:00:00.000Z');
    expect(isDue({ expiresAt }, before)).toBe(false);
    expect(isDue({ expiresAt }, expiresAt)).toBe(true);
    expect(expiring(expiresAt)).toEqual({ status: 'pending', expiresAt: { lte: expiresAt } });
  });
});

describe('statusAt (what a list shows)', () => {
  it('shows a pending request whose time is up as expired, and any other state as it is', () => {
    expect(statusAt({ status: 'pending', expiresAt }, before)).toBe('pending');
    expect(statusAt({ status: 'pending', expiresAt }, expiresAt)).toBe('expired');
    for (const status of ['approved', 'rejected', 'expired'] as const) {
      expect(statusAt({ status, expiresAt }, expiresAt)).toBe(status);
      expect(statusAt({ status, expiresAt }, before)).toBe(status);
    }
  });
});

describe('reviewUrl (the link of the e-mail to the deciding Org admins)', () => {
  const id = '0195a6c1-0000-7000-8000-000000000001';
  it("is the request's console page: under COLLAB_PUBLIC_UI_URL, else the public URL's /console, else the local port", () => {
    expect(
      reviewUrl({ COLLAB_PUBLIC_UI_URL: 'https://ui.example.com', PUBLIC_BASE_URL: 'https://api.example.com', PORT: 8000 }, id),
    ).toBe(`https://ui.example.com/approvals/${id}`);
    expect(reviewUrl({ COLLAB_PUBLIC_UI_URL: 'https://collab.example.com/console/', PORT: 8000 }, id)).toBe(
      `https://collab.example.com/console/approvals/${id}`,
    );
    expect(reviewUrl({ PUBLIC_BASE_URL: 'https://collab.example.com', PORT: 8000 }, id)).toBe(
      `https://collab.example.com/console/approvals/${id}`,
    );
    expect(reviewUrl({ PORT: 8123 }, id)).toBe(`http://127.0.0.1:8123/console/approvals/${id}`);
  });
});

describe('decide (the state machine)', () => {
  it('moves a pending request whose time runs to approved or rejected', () => {
    expect(decide({ status: 'pending', expiresAt }, 'approve', before)).toBe('approved');
    expect(decide({ status: 'pending', expiresAt }, 'reject', before)).toBe('rejected');
  });

  it.each(['approve', 'reject'] as const)('refuses to %s a request once its time is up, marked or not', (decision) => {
    for (const status of ['pending', 'expired'] as const) {
      expect(() => decide({ status, expiresAt }, decision, expiresAt)).toThrow(
        new ConflictError('The request has expired; create a new request'),
      );
    }
    expect(() => decide({ status: 'expired', expiresAt }, decision, before)).toThrow(ConflictError);
  });

  it.each([
    ['approved', 'The request was already approved'],
    ['rejected', 'The request was already rejected'],
  ] as const)('never moves a request that is %s', (status, message) => {
    for (const decision of ['approve', 'reject'] as const) {
      expect(() => decide({ status, expiresAt }, decision, before)).toThrow(new ConflictError(message));
    }
  });
});

describe('parties', () => {
  const admin = (tenantId: string) => ({ userId: 'u', tenantId, role: Role.OrgAdmin });
  const request = { requesterTenantId: 'asking', reviewerTenantId: 'deciding' };

  it('shows a request to the deciding and the asking tenant only', () => {
    expect(() => requireVisible(admin('deciding'), request)).not.toThrow();
    expect(() => requireVisible(admin('asking'), request)).not.toThrow();
    expect(() => requireVisible(admin('other'), request)).toThrow(NotFoundError);
  });

  it('lets the deciding tenant decide; the asking one gets 403, others 404', () => {
    expect(() => requireReviewer(admin('deciding'), request)).not.toThrow();
    expect(() => requireReviewer(admin('asking'), request)).toThrow(ForbiddenError);
    expect(() => requireReviewer(admin('other'), request)).toThrow(NotFoundError);
  });

  it('refuses to invite the own tenant or request an own dataset', () => {
    expect(() => requireOtherTenant('t', 't')).toThrow(ConflictError);
    expect(() => requireOtherTenant('t', 'u')).not.toThrow();
    expect(() => requireForeignDataset('t', 't')).toThrow(ConflictError);
    expect(() => requireForeignDataset('t', 'u')).not.toThrow();
  });

  it('keys a pending request by its association', () => {
    expect(associationKey('project_tenant', 'p', 't')).toBe('project_tenant:p:t');
    expect(associationKey('project_dataset', 'p', 'd')).not.toBe(associationKey('project_tenant', 'p', 'd'));
  });
});

describe('requireInternalToken', () => {
  it('accepts the configured token only, and nothing when none is configured', () => {
    expect(() => requireInternalToken('s3cret', 's3cret')).not.toThrow();
    expect(() => requireInternalToken('s3cret', 's3cre')).toThrow(UnauthorizedError);
    expect(() => requireInternalToken('s3cret', 's3cret ')).toThrow(UnauthorizedError);
    expect(() => requireInternalToken('s3cret', undefined)).toThrow(UnauthorizedError);
    expect(() => requireInternalToken(undefined, '')).toThrow(UnauthorizedError);
    expect(() => requireInternalToken(undefined, undefined)).toThrow(UnauthorizedError);
  });
});

describe('messages', () => {
  const view: RequestView = {
    id: '0195a6c1-0000-7000-8000-000000000001',
    kind: 'project_dataset',
    projectName: 'Q4 <b>bold</b>',
    subjectName: 'Sales "raw" & more',
    projectTenantName: "O'Brien & Co",
    requesterName: '<script>alert(1)</script>',
    requesterEmail: 'eve@example.com',
    expiresAt,
    reviewerName: 'Rita <Reviewer>',
    reviewerEmail: 'rita@example.com',
    rejectionReason: 'Not <now>\nmaybe later',
  };

  it('escapes every name in the HTML part and keeps them as written in the text part', () => {
    const mail = requestCreatedMail(view, 'https://ui.example.com/approvals/x?a=1&b=2');
    expect(mail.html).not.toMatch(/<script>|<b>|<Reviewer>/);
    expect(mail.html).toContain(escapeHtml('<script>alert(1)</script>'));
    expect(mail.html).toContain('Sales &#34;raw&#34; &#38; more');
    expect(mail.html).toContain('href="https://ui.example.com/approvals/x?a=1&#38;b=2"');
    expect(mail.text).toContain('<script>alert(1)</script> (eve@example.com) asks to add the dataset "Sales "raw" & more"');
    expect(mail.text).toContain(`Expires: ${expiresAt.toISOString()}`);
    expect(mail.text).toContain('Review the request: https://ui.example.com/approvals/x?a=1&b=2');
  });

  it('keeps the subject on one line', () => {
    const mail = requestCreatedMail({ ...view, projectName: 'Line\r\nBcc: victim@example.com' }, 'https://ui');
    expect(mail.subject).toBe('Request for a dataset: Line Bcc: victim@example.com');
  });

  it('tells the requester the decision, the reviewer, next steps or the reason', () => {
    const approved = requestDecidedMail(view, 'approved');
    expect(approved.text).toContain('Decision: approved');
    expect(approved.text).toContain('Reviewed by: Rita <Reviewer> <rita@example.com>');
    expect(approved.text).toContain('Next steps:');
    expect(approved.text).not.toContain('Reason');
    const rejected = requestDecidedMail(view, 'rejected');
    expect(rejected.text).toContain('Decision: rejected');
    expect(rejected.text).toContain('Reason: Not <now>\nmaybe later');
    expect(rejected.html).toContain('Not &#60;now&#62;');
    expect(requestDecidedMail({ ...view, rejectionReason: null }, 'rejected').text).toContain('Reason: none given');
  });
});
