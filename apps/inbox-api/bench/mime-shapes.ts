/**
 * Raw mail of hostile shapes, for bench/content.ts (parsing), bench/ingest.ts (the webhooks) and
 * test/webhooks/raw-mime.test.ts: the shapes that once held the event loop for seconds, and the
 * ones that cost a MIME parser most per byte. Each makes a mail of about `bytes` (except where
 * the shape fixes its size), addressed to `to`, with the Message-ID given.
 */

export interface ShapeOptions {
  to: string;
  messageId: string;
  bytes: number;
}

export interface MimeShape {
  make: (options: ShapeOptions) => Buffer;
  /** The size the shape is measured at in the benchmarks when it is not 1 MB. */
  fixedBytes?: number;
}

const header = (options: ShapeOptions, contentType: string, extra: string[] = []) =>
  [
    'From: Bob <bob@example.com>',
    `To: ${options.to}`,
    'Subject: A hostile shape',
    `Message-ID: ${options.messageId}`,
    'Date: Tue, 24 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    `Content-Type: ${contentType}`,
    ...extra,
    '',
    '',
  ].join('\r\n');

/** `unit` repeated to about `bytes`. */
export const repeatTo = (bytes: number, unit: string) => unit.repeat(Math.max(1, Math.ceil(bytes / unit.length)));

/** Tiny attachments in a mail: the count of the `many attachments` shape. */
export const TINY_ATTACHMENTS = 10_000;
/** The decoded size of the attachment of the `one 20 MB attachment` shape. */
export const BIG_ATTACHMENT_BYTES = 20 * 1024 * 1024;
/** Depth of the `deep multiparts` shape: postal-mime is given 64 at most (src/webhooks/mime.ts). */
export const MULTIPART_DEPTH = 60;

/** A multipart of `parts` as one boundary's parts. */
const multipart = (boundary: string, parts: string) => `${parts}--${boundary}--\r\n`;

export const MIME_SHAPES: Record<string, MimeShape> = {
  // 768 KB of these held every other request for 1.7 to 2.9 s when postal-mime ran on the event loop.
  'short lines (text/plain `a`)': {
    make: (options) => Buffer.from(header(options, 'text/plain; charset=utf-8') + repeatTo(options.bytes, 'a\r\n')),
  },
  'blank paragraphs (HTML `<p></p>`)': {
    make: (options) => Buffer.from(header(options, 'text/html; charset=utf-8') + repeatTo(options.bytes, '<p></p>\r\n')),
  },
  'deep multiparts (60 levels, text parts of 8 lines)': {
    make: (options) => {
      let open = '';
      let close = '';
      for (let level = 0; level < MULTIPART_DEPTH; level++) {
        open += `--b${level}\r\nContent-Type: multipart/mixed; boundary="b${level + 1}"\r\n\r\n`;
        close = `--b${level + 1}--\r\n${close}`;
      }
      const part = `--b${MULTIPART_DEPTH}\r\nContent-Type: text/plain\r\n\r\n${'a line of text\r\n'.repeat(8)}`;
      const parts = repeatTo(options.bytes - open.length - close.length, part);
      return Buffer.from(header(options, 'multipart/mixed; boundary="b0"') + open + parts + close + '--b0--\r\n');
    },
  },
  [`many attachments (${TINY_ATTACHMENTS.toLocaleString('en')} tiny ones)`]: {
    fixedBytes: 0,
    make: (options) => {
      const parts = ['--b\r\nContent-Type: text/plain\r\n\r\nSee the files.\r\n'];
      for (let i = 0; i < TINY_ATTACHMENTS; i++) {
        parts.push(
          `--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="f${i}.bin"\r\n` +
            `Content-Transfer-Encoding: base64\r\n\r\n${Buffer.from(`file ${i}`).toString('base64')}\r\n`,
        );
      }
      return Buffer.from(header(options, 'multipart/mixed; boundary="b"') + multipart('b', parts.join('')));
    },
  },
  'one 20 MB attachment': {
    fixedBytes: 0,
    make: (options) => {
      const content = bigAttachment().toString('base64').replace(/.{76}/g, '$&\r\n');
      return Buffer.from(
        header(options, 'multipart/mixed; boundary="b"') +
          multipart(
            'b',
            '--b\r\nContent-Type: text/plain\r\n\r\nThe report is attached.\r\n' +
              '--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="report.pdf"\r\n' +
              `Content-Transfer-Encoding: base64\r\n\r\n${content}\r\n`,
          ),
      );
    },
  },
  // The most parts a mail may have (MAX_MIME_PARTS, src/webhooks/mime.ts), each without a header.
  'parts without headers (20,000)': {
    fixedBytes: 0,
    make: (options) =>
      Buffer.from(header(options, 'multipart/mixed; boundary="b"') + multipart('b', '--b\r\n\r\na\r\n'.repeat(19_998))),
  },
  'base64 text, every line padded': {
    make: (options) =>
      Buffer.from(
        header(options, 'text/plain; charset=utf-8', ['Content-Transfer-Encoding: base64']) + repeatTo(options.bytes, 'YQ==\r\n'),
      ),
  },
  'quoted-printable soft breaks': {
    make: (options) =>
      Buffer.from(
        header(options, 'text/plain; charset=utf-8', ['Content-Transfer-Encoding: quoted-printable']) +
          repeatTo(options.bytes, 'a=\r\n'),
      ),
  },
  'format=flowed short lines': {
    make: (options) =>
      Buffer.from(header(options, 'text/plain; charset=utf-8; format=flowed') + repeatTo(options.bytes, 'a \r\n')),
  },
  // Postgres's text search parser reads each `<!--` as an HTML comment and looks ahead for its end: 80 KB of
  // them took to_tsvector 6.5 s, on the embedded database a stalled process, until the index left them out.
  'comment openers (text/plain `<!--`)': {
    make: (options) => Buffer.from(header(options, 'text/plain; charset=utf-8') + repeatTo(options.bytes, '<!--')),
  },
  'header lines (`X-A: a`)': {
    make: (options) => Buffer.from(header(options, 'text/plain', [repeatTo(options.bytes, 'X-A: a\r\n').trimEnd()]) + 'Hi\r\n'),
  },
};

let attachment: Buffer | undefined;
/** The bytes of the big attachment: not compressible, the same on every call. */
export function bigAttachment(): Buffer {
  if (!attachment) {
    attachment = Buffer.alloc(BIG_ATTACHMENT_BYTES);
    let state = 20261124;
    for (let i = 0; i < attachment.length; i += 4) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      attachment.writeUInt32LE(state, i);
    }
  }
  return attachment;
}
