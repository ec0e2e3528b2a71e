import { newMessageId, parseMessageIds, participantsOf, referencedMessageIds, replyHeaders } from '../src/threads/threading.js';
import { containsPattern, searchTextOf } from '../src/messages/search.js';

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
      'hello\nann@x.com\nbody\nreport.pdf',
    );
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
