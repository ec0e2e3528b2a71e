import type { Response } from 'express';
import type { EventFeed } from './feed.js';
import type { EventResponse } from './schemas.js';
import type { EventDeps, EventFilters } from './service.js';
import { KEY_REVOKED } from '../api-keys/directory.js';
import { readyWithin } from './listener.js';
import { matchesFilters, readEvents } from './service.js';

/** A comment this often keeps proxies and load balancers from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/** Events read per query while catching up. */
const BATCH = 200;

/**
 * A signal aborted when the client goes away: at its response's 'close', or at once when that
 * came already (a client that left while its request was checked, before anyone listened).
 */
export function clientGone(res: Response): AbortSignal {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  if (res.closed) gone.abort();
  return gone.signal;
}

/**
 * Events held for one stream that its client has not taken yet. A client that reads slower than
 * events come is ended past this: it resumes with Last-Event-ID, from the database, without a gap.
 */
const MAX_PENDING_EVENTS = 5000;

/** Writes `chunk`; when the socket's buffer is full, waits until it drains (or the stream ends). */
async function write(res: Response, chunk: string, closed: AbortSignal): Promise<void> {
  if (res.write(chunk) || closed.aborted) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      closed.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    closed.addEventListener('abort', done, { once: true });
  });
}

const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  Connection: 'keep-alive',
  // nginx (the ingress) would buffer the stream otherwise.
  'X-Accel-Buffering': 'no',
};

/**
 * GET /v1/events/stream: Server-Sent Events from the cursor on, each with `id:` its event id
 * (so that EventSource resumes with Last-Event-ID), and then as they commit. It reads its backlog
 * itself, then takes what the process's live feed reads for every stream at once (no query of its
 * own, none while idle). Writes wait for the client to take what was written (one that never
 * reads holds a socket's buffer, not the log), and a client too slow for the live events is ended.
 * Ends when the client goes away, leaving nothing behind, or, before it would send events, when
 * `stands` says the caller's key was revoked meanwhile (its reconnection is then refused with 401).
 */
export async function streamEvents(
  deps: EventDeps & { feed: EventFeed },
  filters: EventFilters,
  options: { after: bigint; res: Response; stands: () => Promise<boolean> },
): Promise<void> {
  const { res } = options;
  // A HEAD gets the headers alone, at once: Node sends those of an answer without a body only as it ends.
  if (res.req.method === 'HEAD') {
    res.writeHead(200, STREAM_HEADERS).end();
    return;
  }
  const closed = new AbortController();
  let wake: (() => void) | undefined;
  closed.signal.addEventListener('abort', () => wake?.(), { once: true });
  const gone = clientGone(res);
  if (gone.aborted) return;
  gone.addEventListener('abort', () => closed.abort(), { once: true });
  // Attached before the backlog is read: whatever commits after the last read of it, the feed pushes.
  const live: EventResponse[] = [];
  const attachment = deps.feed.attach({
    matches: (signal) => matchesFilters(filters, signal),
    push: (events) => {
      for (const event of events) if (matchesFilters(filters, event)) live.push(event);
      if (live.length > MAX_PENDING_EVENTS) closed.abort();
      else if (live.length > 0) wake?.();
    },
    fail: () => closed.abort(),
  });
  let listening = false;
  void attachment.ready.then(() => (listening = true));
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  try {
    res.writeHead(200, STREAM_HEADERS);
    res.write(': stream open\n\n');
    let after = options.after;
    // False, having sent nothing, once the key is revoked.
    const send = async (events: EventResponse[]): Promise<boolean> => {
      if (events.length === 0) return true;
      if (!(await options.stands())) {
        res.write(`: ${KEY_REVOKED}\n\n`);
        return false;
      }
      for (const event of events) {
        // The feed may push what the backlog's reads already gave.
        if (BigInt(event.id) <= after || closed.signal.aborted) continue;
        await write(res, `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`, closed.signal);
        after = BigInt(event.id);
      }
      return true;
    };
    // Reads the backlog; 'ended' when the stream is to end, else whether the feed listened before the last read began.
    const catchUp = async (): Promise<'ended' | boolean> => {
      for (;;) {
        const listened = listening;
        const events = await readEvents(deps.db, filters, after, BATCH);
        if (!(await send(events))) return 'ended';
        if (events.length < BATCH || closed.signal.aborted) return listened;
      }
    };
    const caughtUp = await catchUp();
    if (caughtUp === 'ended') return;
    if (!caughtUp) {
      // The feed was not listening when the last read began (its LISTEN connection opening, or
      // failing: the stream stays open meanwhile): once it is, what committed before is read again,
      // and the feed pushes the rest.
      if (!(await readyWithin(attachment.ready, { abort: closed.signal }))) return;
      if ((await catchUp()) === 'ended') return;
    }
    while (!closed.signal.aborted) {
      if (!(await send(live.splice(0)))) return;
      if (live.length > 0) continue;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    clearInterval(keepAlive);
    attachment.close();
    res.end();
  }
}
