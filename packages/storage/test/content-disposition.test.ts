import { parse } from 'content-disposition';
import { attachmentDisposition, plainFilename } from '../src/content-disposition.js';

describe('plainFilename', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['../../../etc/passwd', '.._.._.._etc_passwd'],
    ['/etc/passwd', '_etc_passwd'],
    ['..\\..\\windows\\system.ini', '.._.._windows_system.ini'],
    ['C:\\Users\\me\\notes.txt', 'C__Users_me_notes.txt'],
    ['notes.txt:hidden', 'notes.txt_hidden'],
    ['say "hi".txt', 'say _hi_.txt'],
    ['a\r\nContent-Type: text/html.txt', 'a__Content-Type_ text_html.txt'],
    ['tab\there\u0000nul\u007f.txt', 'tab_here_nul_.txt'],
    ['100%41.txt', '100_41.txt'],
    ['what?<>|*.txt', 'what_____.txt'],
    ['Bericht März 📎.pdf', 'Bericht M_rz __.pdf'],
    ["it's (a) draft; v=2.txt", "it's (a) draft; v=2.txt"],
    ['.hidden', '.hidden'],
    ['..', '__'],
    ['.', '_'],
    ['', '_'],
  ])('makes %j %j', (name, plain) => {
    expect(plainFilename(name)).toBe(plain);
  });

  it('never leaves a path separator, a quote, a control character or non-ASCII', () => {
    const every = Array.from({ length: 0x3000 }, (_, code) => String.fromCharCode(code)).join('');
    expect(plainFilename(every)).toMatch(/^[\x20-\x7e]+$/);
    expect(plainFilename(every)).not.toMatch(/[/\\"%:]/);
  });
});

describe('attachmentDisposition', () => {
  it('keeps the exact name only in filename*, and a name without separators in filename', () => {
    expect(attachmentDisposition('../../../etc/passwd')).toBe(
      `attachment; filename=".._.._.._etc_passwd"; filename*=UTF-8''..%2F..%2F..%2Fetc%2Fpasswd`,
    );
    expect(attachmentDisposition('report.pdf')).toBe(`attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
  });

  // Parsed back by an RFC 6266 parser (the one Express uses): filename* carries the name as it was.
  it.each([
    '../../../etc/passwd',
    '..\\..\\boot.ini',
    'say "hello".txt',
    'a\r\nSet-Cookie: x=y',
    '100% done %41.txt',
    'a; filename=evil.exe',
    'Bericht März – 東京 📎.pdf',
    "it's (a) *star*!.txt",
  ])('gives a valid header for %j that parses back to the exact name', (name) => {
    const header = attachmentDisposition(name);
    expect(header).toMatch(/^[\x20-\x7e]+$/);
    const { type, parameters } = parse(header);
    expect({ type, filename: parameters.filename }).toEqual({ type: 'attachment', filename: name });
  });

  it('replaces a lone surrogate (no UTF-8 form) with U+FFFD', () => {
    expect(parse(attachmentDisposition('bad\ud800.txt')).parameters.filename).toBe('bad\ufffd.txt');
  });
});
