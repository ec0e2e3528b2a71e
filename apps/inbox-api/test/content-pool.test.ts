/**
 * The content workers (src/messages/content/pool.ts): real worker threads, loading the TypeScript
 * sources as the app does under jest and tsx.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ValidationError } from '@repo/errors';
import { MIME_SHAPES } from '../bench/mime-shapes.js';
import { ContentTooComplexError, createContentPool, messageContent } from '../src/messages/content/index.js';
import { timeLimitVerdict } from '../src/messages/content/pool.js';
import { renderMessage } from '../src/messages/content/message.js';
import { parseForm } from '../src/webhooks/form.js';
import { MAX_MIME_PARTS, parseHeaders, parseMail } from '../src/webhooks/mime.js';
import { readHeaders } from '../src/webhooks/parse.js';

const bigMarkdown = 'a\n'.repeat(499_000);

/** A small multipart mail: a text part, an HTML part and a PDF attachment. */
const mail = Buffer.from(
  [
    'From: "Carol, the accountant" <carol@example.com>',
    'To: agent@inbox.test',
    'Subject: =?utf-8?q?Quartalsbericht_=C3=BCber?=',
    'Message-ID: <q1@example.com>',
    'Date: Tue, 24 Nov 2026 10:00:00 +0000',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: multipart/alternative; boundary="c"',
    '',
    '--c',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The report.',
    '--c',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>The <b>report</b>.</p>',
    '--c--',
    '--b',
    'Content-Type: application/pdf; name="report.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('%PDF-1.7 the report').toString('base64'),
    '--b--',
    '',
  ].join('\r\n'),
);

/** Resolves with how many times a 1 ms timer fired while `work` ran: the event loop's turns. */
async function loopTurnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0;
  const timer = setInterval(() => turns++, 1);
  try {
    await work;
  } finally {
    clearInterval(timer);
  }
  return turns;
}

describe('the content pool', () => {
  it('renders and cleans in a worker exactly as inline', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      const markdown = '# Hi\n\nSome **bold** text, a [link](https://example.com) and <script>x</script>.\n\n> quoted';
      expect(await pool.renderMessage(markdown)).toEqual(renderMessage(markdown));
      const body = { html: '<p>Hello <b>there</b></p><div class="gmail_quote">old</div>', text: 'Hello there' };
      expect(await pool.cleanMessage(body)).toEqual(messageContent(body));
    } finally {
      await pool.close();
    }
  });

  it('keeps the event loop turning while it works on a 1 MB body', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      await pool.renderMessage('warm-up');
      const turns = await loopTurnsDuring(pool.renderMessage(bigMarkdown));
      // Inline, the same work is one long turn in which no timer fires.
      expect(turns).toBeGreaterThan(5);
    } finally {
      await pool.close();
    }
  });

  it('does small bodies inline, without starting a worker', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 1024 });
    try {
      expect(await loopTurnsDuring(pool.renderMessage('Hi'))).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('runs as many tasks at once as it has threads, and queues the rest in order', async () => {
    const pool = createContentPool({ threads: 2, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      const bodies = Array.from({ length: 7 }, (_, i) => `Message ${i}\n\n${'word '.repeat(1000 * (i + 1))}`);
      const results = await Promise.all(bodies.map((body) => pool.renderMessage(body)));
      expect(results.map((result) => result.preview.slice(0, 9))).toEqual(bodies.map((_, i) => `Message ${i}`));
    } finally {
      await pool.close();
    }
  });

  // The limit leaves a fresh worker time for an ordinary task on a busy machine; the slow body takes seconds.
  it('stops a task past its time limit with a 400 the client can act on, and goes on working', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 1_000, inlineBelowBytes: 0 });
    try {
      await pool.renderMessage('warm-up');
      const slow = pool.renderMessage('a\n'.repeat(2_000_000));
      await expect(slow).rejects.toBeInstanceOf(ContentTooComplexError);
      const error = (await slow.catch((caught: unknown) => caught)) as ValidationError;
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.issues).toEqual([expect.objectContaining({ loc: ['body', 'body'], type: 'content_too_complex' })]);
      // The worker was stopped; a new one takes the next task.
      expect((await pool.renderMessage('still **here**')).contentClean).toBe('still **here**');
    } finally {
      await pool.close();
    }
  });

  it('rejects what is queued or running when it closes, and takes nothing after', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    const outcomes = Promise.allSettled([pool.renderMessage(bigMarkdown), pool.renderMessage(bigMarkdown)]);
    await pool.close();
    const [running, queued] = await outcomes;
    for (const outcome of [running, queued]) {
      expect(outcome).toEqual({ status: 'rejected', reason: expect.objectContaining({ code: 'service_unavailable' }) });
    }
    await expect(pool.renderMessage('late')).rejects.toThrow(/shutting down/);
  });

  it('parses raw mail in a worker exactly as inline, the attachments handed over as bytes', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      const parsed = await pool.parseMail(mail);
      expect(parsed).toEqual(await parseMail(mail));
      expect(parsed).toMatchObject({
        from: 'carol@example.com',
        to: ['agent@inbox.test'],
        subject: 'Quartalsbericht über',
        text: 'The report.\n',
        html: '<p>The <b>report</b>.</p>\n',
        messageId: '<q1@example.com>',
        date: new Date('2026-11-24T10:00:00Z'),
      });
      const [attachment] = parsed.attachments;
      expect(attachment).toMatchObject({ filename: 'report.pdf', contentType: 'application/pdf', disposition: 'attachment' });
      expect(Buffer.from(attachment!.content).toString()).toBe('%PDF-1.7 the report');
    } finally {
      await pool.close();
    }
  });

  it('parses header blocks in a worker', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      const block = 'From: Bob <bob@example.com>\r\nCc: a@example.com, b@example.com\r\nIn-Reply-To: <x@example.com>';
      expect(await pool.parseHeaders(block)).toEqual(await parseHeaders(block));
      expect(await pool.parseHeaders(block)).toMatchObject({ inReplyTo: '<x@example.com>', cc: [{}, {}] });
    } finally {
      await pool.close();
    }
  });

  it('decodes URL-encoded bodies in a worker exactly as inline, each value in a buffer of its own', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      const form = new URLSearchParams([
        ['subject', 'Grüße 😀 & more'],
        ['body-plain', 'a line\r\n'.repeat(20_000)],
        ['to', 'a@example.com'],
        ['to', 'b@example.com'],
        ['empty', ''],
      ]).toString();
      const body = Buffer.from(`${form}&bad=%ff&lone=%E2%82`);
      const inWorker = await pool.parseForm(body);
      expect(inWorker).toEqual(parseForm(body));
      const text = (value: Uint8Array) => Buffer.from(value).toString('utf8');
      expect(inWorker.map(([name, value]) => [name, text(value).slice(0, 20)])).toEqual([
        ['subject', 'Grüße 😀 & more'],
        ['body-plain', 'a line\r\na line\r\na li'],
        ['to', 'a@example.com'],
        ['to', 'b@example.com'],
        ['empty', ''],
        ['bad', '\ufffd'],
        ['lone', '\ufffd'],
      ]);
      expect(new Set(inWorker.map(([, value]) => value.buffer)).size).toBe(inWorker.length);
    } finally {
      await pool.close();
    }
  });

  it('rejects, with the reason, mail postal-mime will not read: nesting beyond 64, more than MAX_MIME_PARTS parts', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      const nested = Array.from(
        { length: 70 },
        (_, level) => `--b${level}\r\nContent-Type: multipart/mixed; boundary="b${level + 1}"\r\n\r\n`,
      );
      const deep = Buffer.from(`Content-Type: multipart/mixed; boundary="b0"\r\n\r\n${nested.join('')}`);
      await expect(pool.parseMail(deep)).rejects.toThrow('Maximum MIME nesting depth of 64 levels exceeded');
      const parts = Buffer.from(
        `Content-Type: multipart/mixed; boundary="b"\r\n\r\n${'--b\r\n\r\na\r\n'.repeat(MAX_MIME_PARTS + 1)}`,
      );
      await expect(pool.parseMail(parts)).rejects.toThrow(`more than ${MAX_MIME_PARTS} MIME parts`);
      // The worker goes on working.
      expect((await pool.parseMail(mail)).subject).toBe('Quartalsbericht über');
    } finally {
      await pool.close();
    }
  });

  it('keeps the event loop turning while it parses 1 MB of short lines', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0 });
    try {
      await pool.parseMail(mail);
      const raw = MIME_SHAPES['short lines (text/plain `a`)']!.make({
        to: 'agent@inbox.test',
        messageId: '<s@x>',
        bytes: 1_000_000,
      });
      let parsed: Awaited<ReturnType<typeof pool.parseMail>> | undefined;
      const turns = await loopTurnsDuring(pool.parseMail(raw).then((result) => (parsed = result)));
      expect(turns).toBeGreaterThan(5);
      expect(parsed!.text).toBe('a\n'.repeat(333_334));
    } finally {
      await pool.close();
    }
  });

  it('reads no headers, rather than failing, from a block that cannot be parsed in time (webhooks/parse.ts)', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 100, inlineBelowBytes: 0 });
    try {
      const block = 'X-A: a\r\n'.repeat(500_000);
      expect(await readHeaders(pool, block)).toEqual({ headers: [], headerLines: [], attachments: [] });
    } finally {
      await pool.close();
    }
  });

  // Linux keeps a nice value per thread: field 19 of /proc/self/task/<id>/stat.
  (process.platform === 'linux' ? it : it.skip)(
    'runs its workers below the event loop by `nice`, and at its priority with 0',
    async () => {
      const niceOf = (thread: string) =>
        Number(readFileSync(`/proc/self/task/${thread}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
      const eventLoop = niceOf(String(process.pid));
      const workersStarted = async (nice: number) => {
        const before = new Set(readdirSync('/proc/self/task'));
        const pool = createContentPool({ threads: 1, timeoutMs: 60_000, inlineBelowBytes: 0, nice });
        try {
          await pool.renderMessage('# one');
          return readdirSync('/proc/self/task')
            .filter((thread) => !before.has(thread))
            .filter((thread) => readFileSync(`/proc/self/task/${thread}/comm`, 'utf8').trim() === 'WorkerThread')
            .map(niceOf);
        } finally {
          await pool.close();
        }
      };
      // Under jest each worker also starts a thread of tsx's module hooks, which keeps the priority it was born with.
      const lowered = Math.min(19, eventLoop + 7);
      expect((await workersStarted(7)).filter((nice) => nice === lowered)).toHaveLength(1);
      expect((await workersStarted(0)).filter((nice) => nice !== eventLoop)).toEqual([]);
      expect(niceOf(String(process.pid))).toBe(eventLoop);
    },
  );
});

describe('timeLimitVerdict: a task is stopped for the CPU time it spent, not for waiting for a core', () => {
  it('stops a task whose worker spent the limit, however long that took', () => {
    expect(timeLimitVerdict({ limitMs: 1000, spentMs: 1000, elapsedMs: 1000 })).toEqual({ stop: true });
    expect(timeLimitVerdict({ limitMs: 1000, spentMs: 1200, elapsedMs: 2500 })).toEqual({ stop: true });
  });

  it('waits for what is left of the limit when the worker spent less (it waited for a core)', () => {
    expect(timeLimitVerdict({ limitMs: 1000, spentMs: 400, elapsedMs: 1000 })).toEqual({ stop: false, recheckInMs: 600 });
    // Checked again no sooner than 10 ms later: the limit is not polled.
    expect(timeLimitVerdict({ limitMs: 1000, spentMs: 998, elapsedMs: 1000 })).toEqual({ stop: false, recheckInMs: 10 });
  });

  it('stops a task at four times its limit of wall time, whatever it spent, and never waits past that', () => {
    expect(timeLimitVerdict({ limitMs: 1000, spentMs: 10, elapsedMs: 4000 })).toEqual({ stop: true });
    expect(timeLimitVerdict({ limitMs: 1000, spentMs: 10, elapsedMs: 3800 })).toEqual({ stop: false, recheckInMs: 200 });
  });
});
