import { isoTime, nextDeliveryStatus, shortText } from '../../src/webhooks/delivery-status.js';

describe('nextDeliveryStatus', () => {
  const statuses = ['sent', 'delivered', 'bounced', 'complained', 'failed'] as const;
  const reported = ['delivered', 'bounced', 'complained', 'failed'] as const;

  it.each([
    ['sent', 'delivered', 'delivered'],
    ['sent', 'bounced', 'bounced'],
    ['sent', 'complained', 'complained'],
    ['sent', 'failed', 'failed'],
    // A server may accept mail and bounce it later; another recipient may bounce.
    ['delivered', 'bounced', 'bounced'],
    ['delivered', 'failed', 'failed'],
    ['delivered', 'complained', 'complained'],
    ['bounced', 'complained', 'complained'],
    ['failed', 'complained', 'complained'],
  ] as const)('moves %s to %s on a %s event', (current, event, next) => {
    expect(nextDeliveryStatus(current, event)).toBe(next);
  });

  it.each([
    ['delivered', 'delivered'],
    ['bounced', 'delivered'],
    ['bounced', 'bounced'],
    ['bounced', 'failed'],
    ['failed', 'bounced'],
    ['failed', 'delivered'],
    ['complained', 'delivered'],
    ['complained', 'bounced'],
    ['complained', 'complained'],
  ] as const)('leaves %s as it is on a %s event (late, repeated or out of order)', (current, event) => {
    expect(nextDeliveryStatus(current, event)).toBeUndefined();
  });

  it('never moves a message not yet handed to the provider (or inbound mail)', () => {
    for (const event of reported) expect(nextDeliveryStatus(null, event)).toBeUndefined();
  });

  it('never moves back: applying any events in any order ends at the worst of them', () => {
    const rank = { sent: 0, delivered: 1, bounced: 2, failed: 2, complained: 3 };
    for (const start of statuses) {
      for (const first of reported) {
        for (const second of reported) {
          let status: (typeof statuses)[number] = start;
          for (const event of [first, second]) status = nextDeliveryStatus(status, event) ?? status;
          expect(rank[status]).toBe(Math.max(rank[start], rank[first], rank[second]));
        }
      }
    }
  });
});

describe('isoTime and shortText', () => {
  const now = new Date('2026-11-26T00:00:00.000Z');
  it.each([
    [1521472262.908181, '2018-03-19T15:11:02.908Z'],
    [1513299569, '2017-12-15T00:59:29.000Z'],
    ['2016-01-27T14:59:38.237Z', '2016-01-27T14:59:38.237Z'],
    ['not a time', now.toISOString()],
    [undefined, now.toISOString()],
    [Number.NaN, now.toISOString()],
  ])('reads %p as %p', (value, iso) => {
    expect(isoTime(value, now)).toBe(iso);
  });

  it('keeps provider text to one line of at most the length given', () => {
    expect(shortText('550\r\n5.1.1\u0000 user unknown')).toBe('550 5.1.1 user unknown');
    expect(shortText('x'.repeat(5000))).toHaveLength(1000);
    expect(shortText('')).toBeNull();
    expect(shortText({ not: 'text' })).toBeNull();
  });

  it('cleans in linear time: a reply of a megabyte of spaces (the receiving server writes it) is no stall', () => {
    // `\s*\p{Cc}` retried every start of such a run: 60,000 spaces held the event loop five seconds, a megabyte minutes.
    expect(shortText(`550 ${' '.repeat(1_000_000)}rejected`)).toBe(`550 ${' '.repeat(996)}`);
    expect(shortText(`550${' \t'.repeat(500_000)}\u0000 rejected`)).toBe('550 rejected');
    expect(shortText('a   b')).toBe('a   b');
  });
});
