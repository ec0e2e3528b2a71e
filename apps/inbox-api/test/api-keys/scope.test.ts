import { ForbiddenError, NotFoundError } from '@repo/errors';
import {
  type Actor,
  canReachInbox,
  canReachKey,
  EVERY_INBOX,
  inboxFilter,
  type KeyLimits,
  limitsOfNewKey,
  organizationFor,
  type Permission,
  requireOperator,
  requirePermission,
  requireWholeOrganization,
  scopeOf,
} from '../../src/api-keys/scope.js';

const A = 'org-a';
const operator: Actor = { kind: 'operator', limitKey: 'key:1' };
const link: Actor = { kind: 'link' };
const unlimited: KeyLimits = { rateLimitPerMinute: null, sendLimitPerHour: null };
function key(options: { inboxIds?: string[]; permissions?: Permission[]; limits?: Partial<KeyLimits> } = {}): Actor {
  return {
    kind: 'key',
    keyId: 'k',
    limitKey: 'api-key:k',
    scope: { organizationId: A, ...(options.inboxIds && { inboxIds: options.inboxIds }) },
    permissions: new Set(options.permissions ?? ['read', 'send', 'manage', 'approve']),
    limits: { ...unlimited, ...options.limits },
  };
}
const defaults = { perMinute: 600, sendsPerHour: 100 };

describe('requirePermission', () => {
  it('lets operators do everything, keys what they were given, and download links nothing', () => {
    expect(() => requirePermission(operator, 'manage')).not.toThrow();
    expect(() => requirePermission(key({ permissions: ['read'] }), 'read')).not.toThrow();
    expect(() => requirePermission(key({ permissions: ['read'] }), 'send')).toThrow(ForbiddenError);
    expect(() => requirePermission(key({ permissions: ['approve'] }), 'read')).toThrow('lacks the `read` permission');
    expect(() => requirePermission(link, 'read')).toThrow(ForbiddenError);
  });

  it('keeps organizations to operators', () => {
    expect(() => requireOperator(operator)).not.toThrow();
    expect(() => requireOperator(key())).toThrow(ForbiddenError);
    expect(() => requireOperator(link)).toThrow(ForbiddenError);
  });
});

describe('what a scope reaches', () => {
  const inbox = (id: string, organizationId = A) => ({ id, organizationId });

  it('is every inbox for operators, the organization for a key, some inboxes for a limited key, none for a link', () => {
    expect(canReachInbox(scopeOf(operator), inbox('i1', 'org-b'))).toBe(true);
    expect(canReachInbox(scopeOf(key()), inbox('i1'))).toBe(true);
    expect(canReachInbox(scopeOf(key()), inbox('i1', 'org-b'))).toBe(false);
    expect(canReachInbox(scopeOf(key({ inboxIds: ['i1'] })), inbox('i1'))).toBe(true);
    expect(canReachInbox(scopeOf(key({ inboxIds: ['i1'] })), inbox('i2'))).toBe(false);
    // The same inbox id in another organization is not the key's.
    expect(canReachInbox(scopeOf(key({ inboxIds: ['i1'] })), inbox('i1', 'org-b'))).toBe(false);
    expect(canReachInbox(scopeOf(link), inbox('i1', ''))).toBe(false);
  });

  it('becomes the query condition on inboxes', () => {
    expect(inboxFilter(EVERY_INBOX)).toEqual({});
    expect(inboxFilter(scopeOf(key()))).toEqual({ organizationId: A });
    expect(inboxFilter(scopeOf(key({ inboxIds: ['i1', 'i2'] })))).toEqual({ organizationId: A, id: { in: ['i1', 'i2'] } });
    expect(inboxFilter(scopeOf(link))).toEqual({ organizationId: '', id: { in: [] } });
  });

  it('puts new inboxes and keys in the organization named within reach, else the caller’s own, else `default`', () => {
    expect(organizationFor(EVERY_INBOX, undefined)).toBe('default');
    expect(organizationFor(EVERY_INBOX, 'org-b')).toBe('org-b');
    expect(organizationFor(scopeOf(key()), undefined)).toBe(A);
    expect(organizationFor(scopeOf(key()), A)).toBe(A);
    // Another organization is not found, as if it did not exist.
    expect(() => organizationFor(scopeOf(key()), 'org-b')).toThrow(NotFoundError);
    expect(() => organizationFor(scopeOf(key()), 'default')).toThrow(NotFoundError);
  });

  it('lets only keys for a whole organization create inboxes', () => {
    expect(() => requireWholeOrganization(EVERY_INBOX)).not.toThrow();
    expect(() => requireWholeOrganization(scopeOf(key()))).not.toThrow();
    expect(() => requireWholeOrganization(scopeOf(key({ inboxIds: ['i1'] })))).toThrow(ForbiddenError);
  });

  it('shows a key the keys that reach nothing it cannot', () => {
    const wide = scopeOf(key());
    const narrow = scopeOf(key({ inboxIds: ['i1', 'i2'] }));
    expect(canReachKey(EVERY_INBOX, { organizationId: 'org-b' })).toBe(true);
    expect(canReachKey(wide, { organizationId: A })).toBe(true);
    expect(canReachKey(wide, { organizationId: A, inboxIds: ['i9'] })).toBe(true);
    expect(canReachKey(wide, { organizationId: 'org-b' })).toBe(false);
    expect(canReachKey(narrow, { organizationId: A, inboxIds: ['i2'] })).toBe(true);
    expect(canReachKey(narrow, { organizationId: A, inboxIds: ['i1', 'i2'] })).toBe(true);
    expect(canReachKey(narrow, { organizationId: A, inboxIds: ['i1', 'i3'] })).toBe(false);
    expect(canReachKey(narrow, { organizationId: A })).toBe(false);
    expect(canReachKey(narrow, { organizationId: 'org-b', inboxIds: ['i1'] })).toBe(false);
  });
});

describe('limitsOfNewKey: a key creates keys no broader than itself', () => {
  it('lets operators create any key, its limits as asked (unset: the service settings)', () => {
    expect(limitsOfNewKey(operator, { permissions: ['manage'] }, defaults)).toEqual(unlimited);
    expect(limitsOfNewKey(operator, { permissions: ['read'], rateLimitPerMinute: 0, sendLimitPerHour: 5000 }, defaults)).toEqual({
      rateLimitPerMinute: 0,
      sendLimitPerHour: 5000,
    });
  });

  it('refuses permissions the creator lacks', () => {
    const reader = key({ permissions: ['read', 'manage'] });
    expect(limitsOfNewKey(reader, { permissions: ['read'] }, defaults)).toEqual(unlimited);
    expect(() => limitsOfNewKey(reader, { permissions: ['read', 'send', 'approve'] }, defaults)).toThrow(
      'A key cannot grant permissions it lacks: send, approve',
    );
  });

  it('refuses a key for the whole organization from a key limited to some inboxes', () => {
    const narrow = key({ inboxIds: ['i1'] });
    expect(() => limitsOfNewKey(narrow, { permissions: ['read'] }, defaults)).toThrow(ForbiddenError);
    expect(limitsOfNewKey(narrow, { permissions: ['read'], inboxIds: ['i1'] }, defaults)).toEqual(unlimited);
  });

  it('gives a key the creator’s limits when none are asked for, and refuses higher ones (0, no limit, is the highest)', () => {
    const limited = key({ limits: { rateLimitPerMinute: 60, sendLimitPerHour: null } });
    expect(limitsOfNewKey(limited, { permissions: ['read'] }, defaults)).toEqual({
      rateLimitPerMinute: 60,
      sendLimitPerHour: null,
    });
    expect(limitsOfNewKey(limited, { permissions: ['read'], rateLimitPerMinute: 10, sendLimitPerHour: 100 }, defaults)).toEqual({
      rateLimitPerMinute: 10,
      sendLimitPerHour: 100,
    });
    expect(() => limitsOfNewKey(limited, { permissions: ['read'], rateLimitPerMinute: 61 }, defaults)).toThrow(
      'higher limits than its own: rate_limit_per_minute',
    );
    expect(() => limitsOfNewKey(limited, { permissions: ['read'], rateLimitPerMinute: 0 }, defaults)).toThrow(ForbiddenError);
    // null follows the service setting (600), above the creator's 60.
    expect(() => limitsOfNewKey(limited, { permissions: ['read'], rateLimitPerMinute: null }, defaults)).toThrow(ForbiddenError);
    // The creator follows the service's 100 sends an hour.
    expect(() => limitsOfNewKey(limited, { permissions: ['read'], sendLimitPerHour: 101 }, defaults)).toThrow(
      'send_limit_per_hour',
    );
    // A creator without a limit (0) may give any.
    const free = key({ limits: { rateLimitPerMinute: 0, sendLimitPerHour: 0 } });
    expect(limitsOfNewKey(free, { permissions: ['read'], rateLimitPerMinute: 0, sendLimitPerHour: 1e6 }, defaults)).toEqual({
      rateLimitPerMinute: 0,
      sendLimitPerHour: 1e6,
    });
  });
});
