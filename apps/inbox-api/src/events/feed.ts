import type { Logger } from '@repo/http';
import type { Database } from '../database.js';
import type { EventListener, Subscription } from './listener.js';
import type { EventSignal } from './log.js';
import type { EventResponse } from './schemas.js';
import { toEventResponse } from './service.js';

/** Events read per query of the feed. */
const READ_BATCH = 1000;

/**
 * A stream attached to the feed. Once `ready`, every event committed after that is pushed to it
 * (in id order, all of them: the stream filters); what committed before, it reads itself.
 */
export interface FeedAttachment {
  ready: Promise<void>;
  close(): void;
}

/**
 * The live tail of the event log shared by the process's SSE streams: when a commit that interests
 * at least one of them is announced (the process's one LISTEN), one query reads the new events for
 * all of them, not one query per stream. Reads nothing while no stream is attached, or while no
 * announced commit interests any of them.
 */
export interface EventFeed {
  /** Streams attached now (for tests and metrics). */
  readonly size: number;
  attach(stream: {
    matches: (signal: EventSignal) => boolean;
    push: (events: EventResponse[]) => void;
    /** The feed could not read: the stream must end (its client resumes with Last-Event-ID). */
    fail: (error: unknown) => void;
  }): FeedAttachment;
}

interface Attached {
  matches: (signal: EventSignal) => boolean;
  push: (events: EventResponse[]) => void;
  fail: (error: unknown) => void;
}

/** The feed while streams are attached: its subscription, and the last event id it has read. */
interface Active {
  subscription: Subscription;
  stopped: AbortController;
  /** Resolves once listening, with the log's last id then: what commits later, the feed reads. */
  ready: Promise<void>;
  latest: bigint;
}

export function createEventFeed(deps: { db: Database; events: EventListener; logger: Logger }): EventFeed {
  const streams = new Set<Attached>();
  let active: Active | undefined;

  const start = (): Active => {
    const subscription = deps.events.subscribe((signal) => {
      for (const stream of streams) if (stream.matches(signal)) return true;
      return false;
    });
    const state: Active = { subscription, stopped: new AbortController(), latest: 0n, ready: Promise.resolve() };
    state.ready = subscription.ready.then(async () => {
      // After the LISTEN: a commit later than this read is announced, so the feed reads it.
      const [last] = await deps.db.event.findMany({ orderBy: { id: 'desc' }, take: 1, select: { id: true } });
      state.latest = last?.id ?? 0n;
    });
    void follow(state);
    return state;
  };

  const follow = async (state: Active) => {
    try {
      await state.ready;
      while (await state.subscription.next({ abort: state.stopped.signal })) {
        for (;;) {
          const rows = await deps.db.event.findMany({
            where: { id: { gt: state.latest } },
            orderBy: { id: 'asc' },
            take: READ_BATCH,
          });
          if (rows.length === 0 || state.stopped.signal.aborted) break;
          state.latest = rows.at(-1)!.id;
          const events = rows.map(toEventResponse);
          for (const stream of streams) stream.push(events);
          if (rows.length < READ_BATCH) break;
        }
      }
    } catch (error) {
      deps.logger.warn({ err: error }, 'events: the live feed could not read; its streams end (clients resume)');
      for (const stream of [...streams]) stream.fail(error);
      if (active === state) stop();
    }
  };

  const stop = () => {
    active?.stopped.abort();
    active?.subscription.close();
    active = undefined;
  };

  return {
    get size() {
      return streams.size;
    },
    attach(stream) {
      const attached: Attached = { ...stream };
      streams.add(attached);
      active ??= start();
      return {
        ready: active.ready,
        close() {
          if (!streams.delete(attached)) return;
          if (streams.size === 0) stop();
        },
      };
    },
  };
}
