import {
  type DraftAction,
  type DraftStatus,
  DraftTransitionError,
  nextStatus,
  secondsUntil,
  sendAtProblem,
  type SendPolicy,
} from '../../src/drafts/rules.js';
import { matchesEntry, normaliseListEntry, passesLists, refusedAddresses, type ListRule } from '../../src/lists/rules.js';
import { newAddresses } from '../../src/messages/policy.js';

describe('normaliseListEntry', () => {
  it.each([
    ['Bob@Example.COM', { kind: 'address', entry: 'bob@example.com' }],
    ['  example.com ', { kind: 'domain', entry: 'example.com' }],
    ['@Mail.Example.com', { kind: 'domain', entry: 'mail.example.com' }],
    ["o'brien+tag@example.co.uk", { kind: 'address', entry: "o'brien+tag@example.co.uk" }],
    ['evil.test.', { kind: 'domain', entry: 'evil.test' }],
    ['Bob@Bücher.test', { kind: 'address', entry: 'bob@xn--bcher-kva.test' }],
    ['ｅｖｉｌ.test', { kind: 'domain', entry: 'evil.test' }],
  ])('takes %j', (raw, expected) => {
    expect(normaliseListEntry(raw)).toEqual(expected);
  });

  it.each([
    '',
    '   ',
    'localhost',
    'not an address',
    'a@b',
    'a@@example.com',
    'a b@example.com',
    'x@exa_mple.com',
    'evil\u0000@example.com',
    "'; DROP TABLE list_entries; --",
    '-example.com',
    'example..com',
    `${'a'.repeat(300)}.com`,
    'name@example.com\r\nBcc: x@y.z',
  ])('refuses %j', (raw) => {
    expect(normaliseListEntry(raw)).toBeUndefined();
  });
});

describe('matchesEntry', () => {
  it('matches an address exactly and a domain with its subdomains', () => {
    expect(matchesEntry('Bob@Example.com', 'bob@example.com')).toBe(true);
    expect(matchesEntry('bob@example.com.evil.net', 'bob@example.com')).toBe(false);
    expect(matchesEntry('a@example.com', 'example.com')).toBe(true);
    expect(matchesEntry('a@mail.example.com', 'example.com')).toBe(true);
    expect(matchesEntry('a@notexample.com', 'example.com')).toBe(false);
    expect(matchesEntry('a@example.com.evil.net', 'example.com')).toBe(false);
  });

  it('matches a domain however the address spells it: a trailing dot, Unicode or its ASCII form, full-width letters', () => {
    // Reply-To and From of received mail are not refused for these, so the lists must see through them.
    expect(matchesEntry('collect@evil.test.', 'evil.test')).toBe(true);
    expect(matchesEntry('collect@evil.test..', 'evil.test')).toBe(true);
    expect(matchesEntry('collect@mail.evil.test.', 'evil.test')).toBe(true);
    expect(matchesEntry('collect@evil.test.', 'collect@evil.test')).toBe(true);
    expect(matchesEntry('ceo@bücher.test', 'xn--bcher-kva.test')).toBe(true);
    expect(matchesEntry('ceo@XN--BCHER-KVA.test', 'ceo@xn--bcher-kva.test')).toBe(true);
    expect(matchesEntry('ceo@ｅｖｉｌ.test', 'evil.test')).toBe(true);
    expect(matchesEntry('ceo@evil.test.example', 'evil.test')).toBe(false);
    expect(matchesEntry('not-an-address', 'evil.test')).toBe(false);
  });
});

describe('passesLists', () => {
  const org = (type: 'allow' | 'block', entry: string): ListRule => ({ level: 'organization', type, entry });
  const inbox = (type: 'allow' | 'block', entry: string): ListRule => ({ level: 'inbox', type, entry });

  it('lets everything through without rules', () => {
    expect(passesLists('a@example.com', [])).toBe(true);
  });

  it('lets block win over allow, at either level', () => {
    expect(passesLists('a@example.com', [org('allow', 'example.com'), inbox('block', 'a@example.com')])).toBe(false);
    expect(passesLists('a@example.com', [inbox('allow', 'a@example.com'), org('block', 'example.com')])).toBe(false);
  });

  it('lets only allowed entries through where a level has an allow list', () => {
    const rules = [org('allow', 'partner.com')];
    expect(passesLists('x@partner.com', rules)).toBe(true);
    expect(passesLists('x@other.com', rules)).toBe(false);
  });

  it('applies both levels’ allow lists', () => {
    const rules = [org('allow', 'partner.com'), inbox('allow', 'boss@partner.com')];
    expect(passesLists('boss@partner.com', rules)).toBe(true);
    expect(passesLists('intern@partner.com', rules)).toBe(false);
  });

  it('names each refused address once, lower-case', () => {
    expect(refusedAddresses(['A@Spam.com', 'a@spam.com', 'ok@good.com'], [org('block', 'spam.com')])).toEqual(['a@spam.com']);
  });
});

describe('newAddresses', () => {
  it('keeps the addresses not known, in order', () => {
    expect(newAddresses(['a@x.com', 'b@x.com', 'c@x.com'], ['b@x.com'])).toEqual(['a@x.com', 'c@x.com']);
  });
});

describe('draft transitions', () => {
  const table: [DraftStatus, DraftAction, DraftStatus | 'refused', SendPolicy?][] = [
    ['draft', 'edit', 'draft'],
    ['draft', 'submit', 'scheduled'],
    ['draft', 'submit', 'pending_approval', 'approval'],
    ['draft', 'cancel', 'cancelled'],
    ['draft', 'approve', 'refused'],
    ['draft', 'dispatch', 'refused'],
    ['pending_approval', 'approve', 'scheduled'],
    ['pending_approval', 'reject', 'rejected'],
    ['pending_approval', 'cancel', 'cancelled'],
    ['pending_approval', 'edit', 'refused'],
    ['pending_approval', 'submit', 'refused'],
    ['pending_approval', 'dispatch', 'refused'],
    ['scheduled', 'dispatch', 'sent'],
    ['scheduled', 'submit', 'scheduled'],
    ['scheduled', 'cancel', 'cancelled'],
    ['scheduled', 'abandon', 'cancelled'],
    ['scheduled', 'approve', 'refused'],
    ['scheduled', 'edit', 'refused'],
    ['scheduled', 'hold', 'pending_approval'],
    ['draft', 'hold', 'refused'],
    ['pending_approval', 'hold', 'refused'],
    ['sent', 'hold', 'refused'],
    ['sent', 'dispatch', 'refused'],
    ['sent', 'cancel', 'refused'],
    ['rejected', 'approve', 'refused'],
    ['rejected', 'reject', 'refused'],
    ['cancelled', 'submit', 'refused'],
    ['cancelled', 'dispatch', 'refused'],
  ];
  // A rest parameter: jest would take a fourth named parameter for a `done` callback.
  it.each(table)('%s --%s--> %s', (...row) => {
    const [status, action, expected, policy] = row;
    if (expected === 'refused') {
      expect(() => nextStatus(status, action, policy)).toThrow(DraftTransitionError);
    } else {
      expect(nextStatus(status, action, policy)).toBe(expected);
    }
  });

  it('has no way out of sent, rejected and cancelled', () => {
    const actions: DraftAction[] = ['edit', 'submit', 'approve', 'reject', 'cancel', 'dispatch', 'abandon'];
    for (const status of ['sent', 'rejected', 'cancelled'] as const) {
      for (const action of actions) expect(() => nextStatus(status, action)).toThrow(/cannot be/);
    }
  });

  it('says why a send_at cannot be used', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(sendAtProblem(new Date('2025-12-31T23:59:59Z'), now)).toBe('Must be in the future');
    expect(sendAtProblem(now, now)).toBe('Must be in the future');
    expect(sendAtProblem(new Date('2026-06-01T00:00:00Z'), now)).toBeUndefined();
    expect(sendAtProblem(new Date('2027-01-01T00:00:00Z'), now)).toBeUndefined();
    expect(sendAtProblem(new Date('2027-01-01T00:00:01Z'), now)).toBe('Must be at most one year ahead');
    expect(secondsUntil(null, now)).toBe(0);
    expect(secondsUntil(new Date('2026-01-01T00:00:10.5Z'), now)).toBe(11);
    expect(secondsUntil(new Date('2025-01-01T00:00:00Z'), now)).toBe(0);
  });
});
