import type { Response } from 'express';
import type { EventDeps, EventFilters } from './service.js';
import { matchesFilters, readEvents } from './service.js';

/** A comment this often keeps proxies and load balancers from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/** Events read per query while catching up. */
const BATCH = 200;

/**
 * GET /v1/events/stream: Server-Sent Events from the cursor on, each with `id:` its event id
 * (so that EventSource resumes with Last-Event-ID), and then as they commit: the process's one
 * LISTEN wakes it (no query while idle). Ends when the client goes away, leaving nothing behind.
 */
export async function streamEvents(
  deps: EventDeps,
  filters: EventFilters,
  options: { after: bigint; res: Response },
): Promise<void> {
  const { res } = options;
  const closed = new AbortController();
  res.on('close', () => closed.abort());
  const subscription = deps.events.subscribe((signal) => matchesFilters(filters, signal));
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  try {
    await subscription.ready;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      // nginx (the ingress) would buffer the stream otherwise.
      'X-Accel-Buffering': 'no',
    });
    res.write(': stream open\n\n');
    let after = options.after;
    while (!closed.signal.aborted) {
      const events = await readEvents(deps.db, filters, after, BATCH);
      for (const event of events) {
        res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        after = BigInt(event.id);
      }
      if (events.length === BATCH) continue;
      await subscription.next({ abort: closed.signal });
    }
  } finally {
    clearInterval(keepAlive);
    subscription.close();
    res.end();
  }
}
