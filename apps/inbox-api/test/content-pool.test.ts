/**
 * The content workers (src/messages/content/pool.ts): real worker threads, loading the TypeScript
 * sources as the app does under jest and tsx.
 */
import { ValidationError } from '@repo/errors';
import { ContentTooComplexError, createContentPool, messageContent } from '../src/messages/content/index.js';
import { renderMessage } from '../src/messages/content/message.js';

const bigMarkdown = 'a\n'.repeat(499_000);

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

  it('stops a task past its time limit with a 400 the client can act on, and goes on working', async () => {
    const pool = createContentPool({ threads: 1, timeoutMs: 100, inlineBelowBytes: 0 });
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
});
