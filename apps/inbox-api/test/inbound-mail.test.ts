import { createHash, randomBytes } from 'node:crypto';
import {
  capMessageId,
  derivedMessageId,
  headerDate,
  MAX_MESSAGE_ID_BYTES,
  MAX_STORED_REFERENCES,
  storableMail,
  storedMessageId,
  storedMessageIds,
  storedSubject,
} from '../src/messages/inbound-mail.js';
import { subjectKey } from '../src/threads/threading.js';
import { inboundMail as mail } from './webhooks/helpers.js';

const receivedAt = new Date('2026-11-25T12:00:00Z');

describe('storedMessageIds', () => {
  it.each([
    ['<a\u0000b@x>', ['<ab@x>']],
    ['<a@x>\r\n\t<b\u0001@x>', ['<a@x>', '<b@x>']],
    ['<a@x> <a\u0000@x>', ['<a@x>']],
    ['\u0000<a@x>', ['<a@x>']],
    ['<\ud800a@x>', ['<\ufffda@x>']],
    ['no id here', []],
    ['', []],
  ])('cleans %j to %j', (header, ids) => {
    expect(storedMessageIds(header)).toEqual(ids);
  });

  it('is empty for no header', () => {
    expect(storedMessageIds(undefined)).toEqual([]);
  });
});

describe('storedMessageId', () => {
  it.each([
    ['<first@x> <second@x>', '<first@x>'],
    ['  abc@example.com ', '<abc@example.com>'],
    ['<unclosed@example.com', '<unclosed@example.com>'],
    ['a\u0000b@x', '<ab@x>'],
    ['\u0000\r\n', undefined],
    ['<>', undefined],
    [undefined, undefined],
  ])('takes %j as %j', (header, id) => {
    expect(storedMessageId(header)).toBe(id);
  });
});

describe('capMessageId', () => {
  it('keeps an id of at most MAX_MESSAGE_ID_BYTES as it is', () => {
    const id = `<${'a'.repeat(MAX_MESSAGE_ID_BYTES - 2)}>`;
    expect(capMessageId(id)).toBe(id);
  });

  it('keeps the start of a longer id and its digest: the same id always the same, two alike apart', () => {
    const common = 'x'.repeat(3000);
    const [a, b] = [`<${common}a@example.com>`, `<${common}b@example.com>`].map(capMessageId);
    expect(Buffer.byteLength(a!)).toBeLessThanOrEqual(MAX_MESSAGE_ID_BYTES);
    expect(a).toMatch(/^<x{900,}~[0-9a-f]{64}>$/);
    expect(a).not.toBe(b);
    expect(capMessageId(`<${common}a@example.com>`)).toBe(a);
    expect(storedMessageIds(a)).toEqual([a]);
  });

  it('counts bytes, and cuts no character in two', () => {
    const capped = capMessageId(`<${'é'.repeat(2000)}@x>`);
    expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(MAX_MESSAGE_ID_BYTES);
    expect(capped).toMatch(/^<é+~[0-9a-f]{64}>$/);
    expect(capMessageId(`<${'😀'.repeat(1000)}@x>`)).toMatch(/^<(?:😀)+~[0-9a-f]{64}>$/u);
  });
});

describe('storedSubject', () => {
  it('keeps 998 characters, never half of a character outside the BMP', () => {
    expect(storedSubject('s'.repeat(998))).toHaveLength(998);
    expect(storedSubject('s'.repeat(4096))).toBe('s'.repeat(998));
    expect(storedSubject(`${'s'.repeat(997)}😀 and more`)).toBe('s'.repeat(997));
  });
});

describe('headerDate', () => {
  it.each([
    ['a date', new Date('2026-11-24T08:00:00Z'), new Date('2026-11-24T08:00:00Z')],
    ['no date', new Date('not a date'), undefined],
    ['up to a day ahead', new Date('2026-11-26T11:00:00Z'), new Date('2026-11-26T11:00:00Z')],
    ['more than a day ahead', new Date('2026-11-26T13:00:00Z'), undefined],
    ['a date before 1970', new Date('1969-12-31T23:59:59Z'), undefined],
    ['a date Postgres cannot store', new Date('-100000-01-01T00:00:00Z'), undefined],
    ["JavaScript's earliest", new Date(-8.64e15), undefined],
    ['absent', undefined, undefined],
  ])('takes %s', (_case, date, expected) => {
    expect(headerDate(date, receivedAt)).toEqual(expected);
  });
});

describe('derivedMessageId', () => {
  it('does not throw for a Date that is no date, which counts as none', async () => {
    const id = await derivedMessageId(mail({ date: new Date('not a date') }), 'inbox.test');
    expect(id).toMatch(/^<[0-9a-f]{40}\.no-message-id@inbox\.test>$/);
    expect(await derivedMessageId(mail(), 'inbox.test')).toBe(id);
    expect(await derivedMessageId(mail({ date: receivedAt }), 'inbox.test')).not.toBe(id);
  });

  it('hashes a small and a large mail alike (the large one on the thread pool): each part, then NUL, then the attachments', async () => {
    const expected = (fields: Parameters<typeof mail>[0]) => {
      const m = mail(fields);
      const hash = createHash('sha256');
      for (const part of [m.from, m.to.join(','), m.subject, '', m.text, m.html]) hash.update(part).update('\0');
      for (const attachment of m.attachments) hash.update(attachment.content);
      return `<${hash.digest('hex').slice(0, 40)}.no-message-id@inbox.test>`;
    };
    const attachment = (size: number) => ({
      filename: 'a.bin',
      contentType: 'application/octet-stream',
      content: randomBytes(size),
    });
    for (const fields of [
      { attachments: [attachment(10)] },
      { text: 'é'.repeat(800_000), attachments: [attachment(2 * 1024 * 1024)] },
    ]) {
      expect(await derivedMessageId(mail(fields), 'inbox.test')).toBe(expected(fields));
    }
  });
});

describe('storableMail', () => {
  it('falls back to the receipt time, and derives the same Message-ID at each receipt', async () => {
    const undated = mail({ date: new Date('not a date') });
    const first = await storableMail(undated, { domain: 'inbox.test', receivedAt });
    const later = await storableMail(undated, { domain: 'inbox.test', receivedAt: new Date(receivedAt.getTime() + 3600_000) });
    expect(first.date).toEqual(receivedAt);
    expect(later.messageId).toBe(first.messageId);
  });

  it('derives a Message-ID when the header has none that can be stored', async () => {
    const stored = await storableMail(mail({ messageId: '\u0000' }), { domain: 'inbox.test', receivedAt });
    expect(stored.messageId).toBe(await derivedMessageId(mail(), 'inbox.test'));
  });

  it('keys a capped subject by the whole subject', async () => {
    const subject = 'long '.repeat(1000);
    const stored = await storableMail(mail({ subject }), { domain: 'inbox.test', receivedAt });
    expect(stored.subject).toHaveLength(998);
    expect(stored.subjectKey).toBe(subjectKey(`Re: ${subject}`));
    expect(stored.subjectKey).not.toBe(subjectKey(stored.subject));
  });

  it(`keeps the first reference and the newest, ${MAX_STORED_REFERENCES} in all; In-Reply-To is one id`, async () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `<m${i}@x>`);
    const stored = await storableMail(mail({ references: ids.join('\r\n '), inReplyTo: '<m4999@x> <m4998@x>' }), {
      domain: 'inbox.test',
      receivedAt,
    });
    expect(stored.references).toEqual([ids[0], ...ids.slice(-(MAX_STORED_REFERENCES - 1))]);
    expect(stored.inReplyTo).toBe('<m4999@x>');
  });
});
