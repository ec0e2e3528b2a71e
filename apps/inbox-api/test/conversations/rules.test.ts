import { changeLabels, fixedLabelsTouched, initialLabels, label } from '../../src/messages/labels.js';
import { forwardBody, forwardSubject, replyRecipients, replySubject } from '../../src/messages/replies.js';
import { replyHeaders } from '../../src/threads/threading.js';

describe('replySubject', () => {
  it.each([
    ['Plan', 'Re: Plan'],
    ['Re: Plan', 'Re: Plan'],
    ['RE: Plan', 'RE: Plan'],
    ['re:Plan', 're:Plan'],
    ['Aw: Angebot', 'Aw: Angebot'],
    ['SV: Möte', 'SV: Möte'],
    ['Re[2]: Plan', 'Re[2]: Plan'],
    ['回复：计划', '回复：计划'],
    ['Fwd: Plan', 'Re: Fwd: Plan'],
    ['Regarding the plan', 'Re: Regarding the plan'],
    ['Area: 51', 'Re: Area: 51'],
    ['', 'Re: '],
    ['  Plan  ', 'Re: Plan'],
  ])('%j -> %j', (subject, expected) => {
    expect(replySubject(subject)).toBe(expected);
  });

  it('stays within the longest subject', () => {
    expect(replySubject('x'.repeat(998))).toHaveLength(998);
  });
});

describe('forwardSubject', () => {
  it.each([
    ['Plan', 'Fwd: Plan'],
    ['Fwd: Plan', 'Fwd: Plan'],
    ['FW: Plan', 'FW: Plan'],
    ['WG: Plan', 'WG: Plan'],
    ['Re: Plan', 'Fwd: Re: Plan'],
  ])('%j -> %j', (subject, expected) => {
    expect(forwardSubject(subject)).toBe(expected);
  });
});

describe('replyRecipients', () => {
  const inbound = {
    direction: 'inbound' as const,
    fromAddress: 'Carol <carol@example.com>',
    toAddresses: ['agent@inbox.test', 'Bob@Example.com'],
    ccAddresses: ['bob@example.com', 'AGENT@inbox.test', 'dave@example.com'],
    replyToAddresses: [],
  };

  it('answers the sender of an inbound message', () => {
    expect(replyRecipients(inbound, { inboxAddress: 'agent@inbox.test', replyAll: false })).toEqual({
      to: ['carol@example.com'],
      cc: [],
      bcc: [],
    });
  });

  it('answers Reply-To when the message has one', () => {
    const message = { ...inbound, replyToAddresses: ['tickets@example.com'] };
    expect(replyRecipients(message, { inboxAddress: 'agent@inbox.test', replyAll: false }).to).toEqual(['tickets@example.com']);
  });

  it('replies to all as mail clients do (other To recipients in To, Cc in Cc), without the inbox itself and without repeats, case-insensitively', () => {
    expect(
      replyRecipients(inbound, {
        inboxAddress: 'agent@inbox.test',
        replyAll: true,
        cc: ['DAVE@example.com', 'erin@example.com'],
        bcc: ['carol@example.com', 'audit@example.com', 'Agent@Inbox.Test'],
      }),
    ).toEqual({
      to: ['carol@example.com', 'Bob@Example.com'],
      cc: ['dave@example.com', 'erin@example.com'],
      bcc: ['audit@example.com'],
    });
  });

  it('answers a sent message to its recipients again', () => {
    const sent = {
      direction: 'outbound' as const,
      fromAddress: 'agent@inbox.test',
      toAddresses: ['zoe@example.org', 'agent@inbox.test'],
      ccAddresses: ['yann@example.org'],
      replyToAddresses: [],
    };
    expect(replyRecipients(sent, { inboxAddress: 'agent@inbox.test', replyAll: true })).toEqual({
      to: ['zoe@example.org'],
      cc: ['yann@example.org'],
      bcc: [],
    });
  });

  it('reads addresses as the transport will, and leaves out what is not plain name@domain', () => {
    const junk = {
      ...inbound,
      replyToAddresses: ['ceo"@rival.test,', '"ceo@rival.test(', 'Desk <desk@Example.org.>', '"no domain"', 'x@[127.0.0.1]'],
    };
    expect(replyRecipients(junk, { inboxAddress: 'agent@inbox.test', replyAll: false }).to).toEqual([
      'ceo@rival.test',
      'desk@Example.org.',
    ]);
  });

  it('has nobody to answer when the inbox wrote to itself', () => {
    const self = { ...inbound, fromAddress: 'agent@inbox.test', toAddresses: ['agent@inbox.test'], ccAddresses: [] };
    expect(replyRecipients(self, { inboxAddress: 'agent@inbox.test', replyAll: true }).to).toEqual([]);
  });
});

describe('References of a reply', () => {
  it('keeps the first and the newest ids once the chain is long', () => {
    const ids = Array.from({ length: 30 }, (_, i) => `<m${i}@example.com>`);
    const { inReplyTo, references } = replyHeaders({ providerMessageId: '<m30@example.com>', references: ids.join(' ') });
    expect(inReplyTo).toBe('<m30@example.com>');
    expect(references).toHaveLength(20);
    expect(references[0]).toBe('<m0@example.com>');
    expect(references.at(-1)).toBe('<m30@example.com>');
    expect(references[1]).toBe('<m12@example.com>');
  });
});

describe('forwardBody', () => {
  it('puts the note above the forwarded header block and text', () => {
    const body = forwardBody('FYI', {
      fromAddress: 'carol@example.com',
      toAddresses: ['agent@inbox.test'],
      ccAddresses: [],
      subject: 'Plan',
      timestamp: new Date('2026-01-02T03:04:05Z'),
      text: 'The plan.',
    });
    expect(body).toBe(
      'FYI\n\n---------- Forwarded message ---------  \nFrom: carol@example.com  \nDate: Fri, 02 Jan 2026 03:04:05 GMT  \n' +
        'Subject: Plan  \nTo: agent@inbox.test\n\nThe plan.',
    );
  });
});

describe('labels', () => {
  it('takes lower-case slugs of at most 64 characters, lower-casing what it is given', () => {
    expect(label.parse('Needs-Review')).toBe('needs-review');
    expect(label.parse('project/alpha:2')).toBe('project/alpha:2');
    expect(label.parse('a'.repeat(64))).toHaveLength(64);
    for (const bad of [
      'a'.repeat(65),
      '',
      'tab\there',
      'nul\0',
      'line\nbreak',
      "x'; DROP TABLE messages; --",
      'ünïcode',
      '-x',
      'a b',
    ]) {
      expect(label.safeParse(bad).success).toBe(false);
    }
  });

  it('starts with the system labels of the direction', () => {
    expect(initialLabels('inbound', ['spam'])).toEqual(['received', 'unread', 'spam']);
    expect(initialLabels('outbound', ['sent', 'crm'])).toEqual(['sent', 'crm']);
  });

  it('adds and removes, removal winning, never repeating', () => {
    expect(changeLabels(['received', 'unread'], { add: ['todo', 'todo', 'urgent'], remove: ['unread', 'urgent'] })).toEqual([
      'received',
      'todo',
    ]);
    expect(fixedLabelsTouched({ add: ['sent'], remove: ['received', 'unread'] })).toEqual(['sent', 'received']);
  });
});
