import { parse } from 'content-disposition';
import { ForbiddenError } from '@repo/errors';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  base64Headers,
  base64Json,
  base64JsonPieces,
  checkDownloadToken,
  type DownloadLinks,
  downloadHeaders,
  servableContentType,
  signedDownloadUrl,
} from '../../src/attachments/download.js';

const ID = '01960000-0000-7000-8000-000000000001';
const OTHER = '01960000-0000-7000-8000-000000000002';
const NOW = Date.UTC(2026, 10, 23, 12);
const links: DownloadLinks & { baseUrl: string } = {
  baseUrl: 'https://inbox.example.com/api',
  secret: 'test-secret',
  ttlSeconds: 3600,
};

const linkOf = (url: string) => {
  const { searchParams } = new URL(url);
  return { token: searchParams.get('token')!, expires: searchParams.get('expires')! };
};

describe('download links', () => {
  it('are absolute, under PUBLIC_BASE_URL, and expire after the TTL', () => {
    const url = new URL(signedDownloadUrl(ID, links, NOW));
    expect(`${url.origin}${url.pathname}`).toBe(`https://inbox.example.com/api/v1/attachments/${ID}/content`);
    expect([...url.searchParams.keys()]).toEqual(['token', 'expires']);
    expect(Number(url.searchParams.get('expires'))).toBe(NOW / 1000 + 3600);
  });

  it('open their attachment until they expire', () => {
    const link = linkOf(signedDownloadUrl(ID, links, NOW));
    expect(() => checkDownloadToken(ID, link, links.secret, NOW + 3599_000)).not.toThrow();
  });

  const link = linkOf(signedDownloadUrl(ID, links, NOW));
  it.each<[string, { token?: string; expires?: string }, number, string]>([
    ['missing', {}, NOW, 'needs the token and expires'],
    ['without its expiry', { token: link.token }, NOW, 'needs the token and expires'],
    ['without its token', { expires: link.expires }, NOW, 'needs the token and expires'],
    ['expired', link, NOW + 3600_000, 'has expired'],
    ['of another attachment', linkOf(signedDownloadUrl(OTHER, links, NOW)), NOW, 'not valid for this attachment'],
    ['with a later expiry than signed', { ...link, expires: String(Number(link.expires) + 3600) }, NOW, 'not valid'],
    ['signed with another key', linkOf(signedDownloadUrl(ID, { ...links, secret: 'other' }, NOW)), NOW, 'not valid'],
    ['with a malformed token', { token: '../../x', expires: link.expires }, NOW, 'not valid for this attachment'],
    ['with a malformed expiry', { token: link.token, expires: `${link.expires}.0` }, NOW, 'not valid for this attachment'],
  ])('refuse a link %s with 403 forbidden', (_case, candidate, at, message) => {
    expect(() => checkDownloadToken(ID, candidate, links.secret, at)).toThrow(ForbiddenError);
    expect(() => checkDownloadToken(ID, candidate, links.secret, at)).toThrow(message);
  });
});

describe('binary download headers', () => {
  const file = { filename: 'report.pdf', contentType: 'application/pdf', contentHash: `sha256:${'ab'.repeat(32)}` };

  it('carry the type, length, an attachment disposition, the ETag and what keeps a document inert', () => {
    expect(downloadHeaders(file, 1234)).toEqual({
      'Content-Type': 'application/pdf',
      'Content-Length': '1234',
      'Content-Disposition': `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "sandbox; default-src 'none'",
      ETag: `"sha256:${'ab'.repeat(32)}"`,
      'Cache-Control': 'private',
    });
  });

  it.each([
    ['text/html; charset=utf-8', 'text/html; charset=utf-8'],
    ['image/svg+xml', 'image/svg+xml'],
    [
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    ],
    ['text/plain\r\nSet-Cookie: a=b', 'application/octet-stream'],
    ['text/plain; name="résumé.txt"', 'application/octet-stream'],
    ['not a type', 'application/octet-stream'],
    ['', 'application/octet-stream'],
  ])('send the stored type %j as %j', (stored, sent) => {
    expect(servableContentType(stored)).toBe(sent);
  });

  // Every name a sender can choose, parsed back by an RFC 6266 parser (the one Express uses).
  it.each([
    ['quotes', 'say "hello".txt'],
    ['backslashes', 'C:\\Users\\me\\notes.txt'],
    ['a path', '../../etc/passwd'],
    ['CR and LF', 'a\r\nContent-Type: text/html\r\n\r\n<script>.txt'],
    ['other control characters', 'tab\there\u0007bell\u007f.txt'],
    ['percent signs', '100% done %41.txt'],
    ['semicolons and equals signs', 'a; filename=evil.exe'],
    ['unicode', 'Bericht März – 東京 📎.pdf'],
    ['RFC 5987 specials', "it's (a) *star*!.txt"],
    ['a very long name', `${'ü'.repeat(2000)}.txt`],
  ])('carry a filename with %s that parses back to the same name', (_case, filename) => {
    const header = downloadHeaders({ ...file, filename }, 1)['Content-Disposition'];
    expect(header).toMatch(/^[\x20-\x7e]+$/);
    expect(parse(header)).toMatchObject({ type: 'attachment', parameters: { filename } });
  });

  it('carry a name with a lone surrogate (not storable as UTF-8) with U+FFFD in its place', () => {
    const header = downloadHeaders({ ...file, filename: 'bad\ud800.txt' }, 1)['Content-Disposition'];
    expect(parse(header).parameters.filename).toBe('bad\ufffd.txt');
  });
});

describe('base64 downloads', () => {
  const file = { filename: 'report.pdf', contentType: 'application/pdf', contentHash: `sha256:${'cd'.repeat(32)}` };

  /** The content in chunks of these sizes, as a storage stream yields it. */
  function chunked(content: Buffer, sizes: number[]): Readable {
    const chunks: Buffer[] = [];
    let start = 0;
    for (let i = 0; start < content.length; i++) {
      const size = sizes[i % sizes.length]!;
      chunks.push(content.subarray(start, start + size));
      start += size;
    }
    return Readable.from(chunks);
  }

  async function jsonOf(content: Readable, size: number, of = file): Promise<string[]> {
    const pieces: string[] = [];
    for await (const piece of base64JsonPieces(content, base64Json(of, size), size)) pieces.push(piece);
    return pieces;
  }

  it.each([0, 1, 2, 3, 4, 5, 6, 7, 100, 65_536, 65_537, 200_001])(
    'of %d bytes, in chunks of any size, are the JSON of the whole content, of the length announced',
    async (size) => {
      const content = randomBytes(size);
      const expected = JSON.stringify({
        content: content.toString('base64'),
        content_type: file.contentType,
        filename: file.filename,
      });
      for (const sizes of [[1], [2], [4096], [65_536], [1, 5, 7, 64 * 1024 + 1], [size + 1]]) {
        const json = (await jsonOf(chunked(content, sizes), size)).join('');
        expect(json).toBe(expected);
        expect(Buffer.byteLength(json)).toBe(base64Json(file, size).length);
      }
      expect(base64Headers(file, size)['Content-Length']).toBe(String(Buffer.byteLength(expected)));
    },
  );

  it('keep the field order content, content_type, filename, and any file name or type as JSON', async () => {
    const odd = { ...file, filename: 'say "hi"\\ \u2028 März 📎 \ud800.txt', contentType: 'text/plain; name="x\\y"' };
    const json = JSON.parse((await jsonOf(chunked(Buffer.from('hello'), [2]), 5, odd)).join('')) as Record<string, string>;
    expect(Object.keys(json)).toEqual(['content', 'content_type', 'filename']);
    expect(json).toEqual({ content: 'aGVsbG8=', content_type: odd.contentType, filename: odd.filename });
  });

  it('never hold more than a piece, however large the chunks storage yields', async () => {
    const content = randomBytes(3 * 1024 * 1024);
    const pieces = await jsonOf(Readable.from([content]), content.length);
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(64 * 1024 + 12);
    expect(pieces.length).toBeGreaterThan(60);
  });

  it('fail, never ending the JSON, when storage yields fewer or more bytes than recorded', async () => {
    const content = randomBytes(1000);
    await expect(jsonOf(chunked(content.subarray(0, 999), [100]), 1000)).rejects.toThrow(
      'The stored content has fewer bytes than the 1000 recorded',
    );
    await expect(jsonOf(chunked(content, [100]), 999)).rejects.toThrow('The stored content has more bytes than the 999 recorded');
  });

  it('fail when the read fails, before anything is sent when it fails at once', async () => {
    const failing = (after: Buffer[]) =>
      Readable.from(
        (function* () {
          yield* after;
          throw new Error('disk gone');
        })(),
      );
    const pieces: string[] = [];
    await expect(
      (async () => {
        for await (const piece of base64JsonPieces(failing([]), base64Json(file, 10), 10)) pieces.push(piece);
      })(),
    ).rejects.toThrow('disk gone');
    expect(pieces).toEqual([]);
    await expect(jsonOf(failing([randomBytes(6)]), 10)).rejects.toThrow('disk gone');
  });

  it('carry JSON headers with the length and a tag of their own', () => {
    expect(base64Headers(file, 5)).toEqual({
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String('{"content":"aGVsbG8=","content_type":"application/pdf","filename":"report.pdf"}'.length),
      'X-Content-Type-Options': 'nosniff',
      ETag: `"sha256:${'cd'.repeat(32)}.base64"`,
      'Cache-Control': 'private',
    });
  });
});
