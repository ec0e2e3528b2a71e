import {
  chooseThread,
  newMessageId,
  normalizeSubject,
  parseMessageIds,
  participantsOf,
  referencedMessageIds,
  replyHeaders,
  MAX_SUBJECT_SOURCE_LENGTH,
  subjectKey,
} from '../src/threads/threading.js';
import { decodeText, fieldBodyText } from '../src/webhooks/body.js';
import { bodyText, storable, subjectText } from '../src/webhooks/mime.js';
import { containsPattern, MAX_SEARCH_TEXT_LENGTH, searchTextOf } from '../src/messages/search.js';

describe('threading rules', () => {
  it('makes Message-IDs in our domain, in angle brackets, unique', () => {
    const a = newMessageId('inbox.example.com');
    expect(a).toMatch(/^<[0-9a-f-]{36}@inbox\.example\.com>$/);
    expect(newMessageId('inbox.example.com')).not.toBe(a);
  });

  it.each([
    ['<a@x> <b@x>', ['<a@x>', '<b@x>']],
    ['<a@x>\r\n <b@x>\t<c@x>', ['<a@x>', '<b@x>', '<c@x>']],
    ['<a@x> <a@x>', ['<a@x>']],
    ['not an id', []],
    ['', []],
    [null, []],
  ])('parses Message-IDs from %j', (header, ids) => {
    expect(parseMessageIds(header)).toEqual(ids);
  });

  it('replies to the newest message: In-Reply-To is its id, References its chain plus its id', () => {
    expect(replyHeaders({ providerMessageId: '<c@x>', references: '<a@x> <b@x>' })).toEqual({
      inReplyTo: '<c@x>',
      references: ['<a@x>', '<b@x>', '<c@x>'],
    });
    expect(replyHeaders({ providerMessageId: '<a@x>', references: null })).toEqual({ inReplyTo: '<a@x>', references: ['<a@x>'] });
    // RFC 5322 §3.6.4: no References, but In-Reply-To naming one message: that id, then the parent's.
    expect(replyHeaders({ providerMessageId: '<b@x>', references: null, inReplyTo: '<a@x>' })).toEqual({
      inReplyTo: '<b@x>',
      references: ['<a@x>', '<b@x>'],
    });
    // In-Reply-To naming several messages says nothing of the chain; References, when there, wins.
    expect(replyHeaders({ providerMessageId: '<c@x>', references: null, inReplyTo: '<a@x> <b@x>' }).references).toEqual([
      '<c@x>',
    ]);
    expect(replyHeaders({ providerMessageId: '<c@x>', references: '<a@x>', inReplyTo: '<b@x>' }).references).toEqual([
      '<a@x>',
      '<c@x>',
    ]);
  });

  it('keeps the root and the newest ids when a References chain grows long', () => {
    const chain = Array.from({ length: 40 }, (_, i) => `<m${i}@x>`);
    const { references } = replyHeaders({ providerMessageId: '<m40@x>', references: chain.join(' ') });
    expect(references).toHaveLength(20);
    expect(references[0]).toBe('<m0@x>');
    expect(references.at(-1)).toBe('<m40@x>');
    expect(references[1]).toBe('<m22@x>');
  });

  it('looks an inbound message up by In-Reply-To first, then References newest first', () => {
    expect(referencedMessageIds('<c@x>', '<a@x> <b@x> <c@x>')).toEqual(['<c@x>', '<b@x>', '<a@x>']);
    expect(referencedMessageIds(null, '<a@x> <b@x>')).toEqual(['<b@x>', '<a@x>']);
    expect(referencedMessageIds(undefined, undefined)).toEqual([]);
  });

  it('lists participants lower-cased, in order, once', () => {
    expect(participantsOf({ from: 'Ann@X.com', to: ['bob@x.com', 'ann@x.com'], cc: ['Cy@x.com'] })).toEqual([
      'ann@x.com',
      'bob@x.com',
      'cy@x.com',
    ]);
  });
});

describe('search rules', () => {
  it('joins the searchable fields lower-cased, one per line', () => {
    expect(searchTextOf({ subject: 'Hello', fromAddress: 'Ann@X.com', text: 'Body', attachmentFilenames: ['Report.PDF'] })).toBe(
      'hello\nann@x.com\nreport.pdf\nbody',
    );
  });

  it('reads the first 200,000 characters, the attachments’ names before the body, never a character cut in two', () => {
    const text = `${'x'.repeat(MAX_SEARCH_TEXT_LENGTH - 'S\na@x.com\nreport.pdf\n'.length - 1)}😀 beyond`;
    const searched = searchTextOf({ subject: 'S', fromAddress: 'a@x.com', text, attachmentFilenames: ['report.pdf'] });
    expect(searched).toHaveLength(MAX_SEARCH_TEXT_LENGTH);
    expect(searched.startsWith('s\na@x.com\nreport.pdf\nxxx')).toBe(true);
    expect(searched.endsWith('x\ufffd')).toBe(true);
  });

  it.each([
    ['invoice', '%invoice%'],
    ['INVOICE', '%invoice%'],
    ['100%', '%100\\%%'],
    ['a_b', '%a\\_b%'],
    ['back\\slash', '%back\\\\slash%'],
    ["'; DROP TABLE messages; --", "%'; drop table messages; --%"],
  ])('turns %j into the LIKE pattern %j', (q, pattern) => {
    expect(containsPattern(q)).toBe(pattern);
  });
});

describe('normalizeSubject', () => {
  it.each([
    ['Quarterly numbers', 'quarterly numbers'],
    ['Re: Quarterly numbers', 'quarterly numbers'],
    ['RE: re: Fwd: Quarterly numbers', 'quarterly numbers'],
    ['Re[2]: Quarterly numbers', 'quarterly numbers'],
    ['Re(3): Quarterly numbers', 'quarterly numbers'],
    ['FW: Quarterly numbers', 'quarterly numbers'],
    ['AW: WG: Quarterly numbers', 'quarterly numbers'],
    ['SV: VS: Quarterly numbers', 'quarterly numbers'],
    ['Antw: Quarterly numbers', 'quarterly numbers'],
    ['Réf : Quarterly numbers', 'quarterly numbers'],
    ['RE : Quarterly numbers', 'quarterly numbers'],
    ['回复：Quarterly numbers', 'quarterly numbers'],
    ['转发: 答复: Quarterly numbers', 'quarterly numbers'],
    ['Re：Quarterly numbers', 'quarterly numbers'],
    ['[finance] Re: Quarterly numbers', 'quarterly numbers'],
    ['Re: [finance] Quarterly numbers', 'quarterly numbers'],
    ['  Re:   Quarterly\tnumbers  ', 'quarterly numbers'],
    ['Re:', ''],
    ['', ''],
    ['Regarding: the plan', 'regarding: the plan'],
    ['Reply needed', 'reply needed'],
  ])('%j → %j', (subject, key) => {
    expect(normalizeSubject(subject)).toBe(key);
  });

  it('removes the prefixes and tags of the first 1,000 characters: a flood of them costs no more', () => {
    expect(normalizeSubject(`${'Re: '.repeat(250)}x`)).toBe('x');
    // Compared as booleans: a failure would print a megabyte.
    expect(normalizeSubject(`${'Re: '.repeat(250_000)}x`) === `${'re: '.repeat(250_000 - 250)}x`).toBe(true);
    // 91 tags and prefixes in turn start in the first 1,000 characters.
    expect(normalizeSubject(`${'[list] Re: '.repeat(100_000)}x`) === `${'[list] re: '.repeat(100_000 - 91)}x`).toBe(true);
  });
});

describe('subjectKey', () => {
  it('is the SHA-256 of the normalised subject, the same for a reply, empty when nothing is left', () => {
    // sha256sum of `quarterly numbers`
    expect(subjectKey('Quarterly numbers')).toBe('9900d1bdd55ddd8b804757e30b95ff793968179688df860c456f09da92a0772a');
    expect(subjectKey('RE: [finance] Quarterly  numbers')).toBe(subjectKey('Quarterly numbers'));
    expect(subjectKey('Re:')).toBe('');
  });

  it('is as short for a subject of any length', () => {
    expect(subjectKey('😀'.repeat(499))).toHaveLength(64);
    expect(subjectKey('x'.repeat(1_000_000))).toHaveLength(64);
  });
});

describe('chooseThread', () => {
  const date = new Date('2024-03-10T12:00:00Z');
  const day = 24 * 3600 * 1000;
  const candidate = (id: string, daysAgo: number, participants: string[]) => ({
    id,
    lastMessageAt: new Date(date.getTime() - daysAgo * day),
    participants,
  });
  const base = {
    referenced: [],
    sameSubject: [],
    participants: ['bob@example.com', 'agent@inbox.test'],
    inboxAddress: 'agent@inbox.test',
    date,
  };

  it('follows the first referenced message the inbox has', () => {
    expect(
      chooseThread({ ...base, referenced: [undefined, 't-2', 't-1'], sameSubject: [candidate('t-3', 1, ['bob@example.com'])] }),
    ).toBe('t-2');
  });

  it('falls back to the most recent same-subject thread with a shared participant', () => {
    const sameSubject = [
      candidate('old', 20, ['bob@example.com']),
      candidate('recent', 2, ['bob@example.com']),
      candidate('newest-stranger', 1, ['eve@example.com']),
    ];
    expect(chooseThread({ ...base, sameSubject })).toBe('recent');
  });

  it('does not count the inbox itself as a shared participant', () => {
    expect(chooseThread({ ...base, sameSubject: [candidate('t', 1, ['agent@inbox.test', 'eve@example.com'])] })).toBeUndefined();
  });

  it('ignores threads quiet for more than 30 days, either side of the message date', () => {
    expect(chooseThread({ ...base, sameSubject: [candidate('stale', 31, ['bob@example.com'])] })).toBeUndefined();
    expect(chooseThread({ ...base, sameSubject: [candidate('edge', 30, ['BOB@example.com'])] })).toBe('edge');
    expect(chooseThread({ ...base, sameSubject: [candidate('future', -31, ['bob@example.com'])] })).toBeUndefined();
  });

  it('starts a new thread when nothing matches', () => {
    expect(chooseThread(base)).toBeUndefined();
  });
});

describe('received text of any length', () => {
  it('decodes and cleans a body field in slices exactly as in one piece, CR LF and characters across slice ends included', async () => {
    const slice = 256 * 1024;
    const field = (bytes: Buffer) => ({ fields: new Map([['text', bytes]]), files: [] });
    for (const text of [
      `${'a'.repeat(slice - 1)}\r\n${'b\r\n'.repeat(1000)}`,
      `${'a'.repeat(slice - 1)}😀\r${'\0'.repeat(3)}\r\r\n${'c'.repeat(slice)}\ud800`,
      `${'line\r\n'.repeat(300_000)}\r`,
      `${'é'.repeat(slice)}\r\n`,
    ]) {
      expect(await fieldBodyText(field(Buffer.from(text)), 'text')).toBe(bodyText(text));
      // Line ends as a regular expression would have them (CR LF, then a lone CR, to LF): split and joined, ten times faster.
      expect(bodyText(text)).toBe(storable(text).replace(/\r\n?/g, '\n'));
    }
    // Other charsets, a character cut by each slice's end: read as decodeText reads them in one piece.
    const utf16 = Buffer.from(`x${'😀\r\n'.repeat(slice / 4)}`, 'utf16le');
    const unknown = Buffer.concat([Buffer.from('a'.repeat(slice - 1)), Buffer.from('Grüße\r\n'.repeat(1000), 'latin1')]);
    for (const [bytes, charset] of [
      [utf16, 'utf-16le'],
      [unknown, 'x-unknown'],
      [Buffer.from(`${'a'.repeat(slice - 1)}Grüße ☃`.repeat(3)), 'x-unknown'],
    ] as const) {
      expect(await fieldBodyText(field(bytes), 'text', charset)).toBe(bodyText(decodeText(bytes, charset)));
    }
    expect(await fieldBodyText(field(Buffer.from('')), 'html')).toBe('');
  });

  it('reads the first 64 KiB of a subject, for its text and its thread key alike', () => {
    const subject = `Re: ${'x'.repeat(MAX_SUBJECT_SOURCE_LENGTH)}`;
    expect(subjectKey(`${subject} and 20 MB more`)).toBe(subjectKey(subject));
    // A reply's prefix does not push the end of what is keyed.
    expect(subjectKey(`Re: Fwd: ${subject}`)).toBe(subjectKey(subject));
    expect(subjectText(`${subject}\u0000 more`)).toBe(subject.slice(0, MAX_SUBJECT_SOURCE_LENGTH));
  });
});
