/**
 * The only way requests reach agents: a fetch whose every connection, redirects included, goes to
 * an address checked against the rules of addresses.ts (@repo/net-guard's guarded agent: the host
 * is resolved and every address checked at each connection, and the socket opened to the checked
 * address itself, so neither DNS rebinding nor a redirect reaches a refused address).
 */
import { MAX_INPUT_NESTING, nestsDeeperThan } from '@repo/http';
import { addressRefusal, createGuardedAgent, type Resolve } from '@repo/net-guard';
import { fetch as undiciFetch } from 'undici';
import { type AddressPolicy, refusalMessage } from './addresses.js';
import { AgentCallError, type JsonRpcRequest } from './interface.js';

export type { Resolve } from '@repo/net-guard';

export interface AgentNetwork {
  fetch: typeof fetch;
  close(): Promise<void>;
}

export function createAgentNetwork(options: { policy: AddressPolicy; resolve?: Resolve }): AgentNetwork {
  const dispatcher = createGuardedAgent({
    policy: options.policy,
    resolve: options.resolve,
    describe: (refusal, resolved) =>
      refusalMessage(resolved ? "The agent's host resolves to" : "The agent's host is", refusal, 'which is not allowed'),
  });
  return {
    fetch: (async (input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) => {
      try {
        // undici's own fetch, whose Response the SDKs read like the global one.
        return await undiciFetch(input, { ...init, dispatcher });
      } catch (error) {
        if (init?.signal?.aborted) throw error;
        const refusal = addressRefusal(error);
        if (refusal) throw new AgentCallError('address_refused', refusal.message);
        throw new AgentCallError('unreachable', 'The agent could not be reached', { cause: error });
      }
    }) as unknown as typeof fetch,
    close: () => dispatcher.close(),
  };
}

/**
 * The most bytes of an agent's answer this service holds: a body that is read whole (JSON: a
 * card, a JSON-RPC response), or one event of a text/event-stream, which the SDKs read one event at
 * a time and which may run as long as the call. An answer is a message or task (files go by URL, or
 * inline in a few MiB), read and parsed whole, up to COLLAB_AGENT_ROUTE_CONCURRENCY of them at once;
 * 8 MiB leaves inline parts room and keeps all of that far inside the process's memory budget.
 */
export const MAX_ANSWER_BYTES = 8 * 2 ** 20;

/** What runCall hands the work it runs. */
export interface AgentCall {
  /** Ends the call: at its timeout, or at once when an answer of the agent passes MAX_ANSWER_BYTES. */
  signal: AbortSignal;
  /** The checked fetch, ended by `signal`, naming the routed request to the agent (X-Request-Id), its answers capped. */
  fetch: typeof fetch;
}

export interface CallSettings {
  /** The checked fetch of createAgentNetwork. */
  fetch: typeof fetch;
  timeoutSeconds: number;
  /**
   * Whether the protocol's SDK reads a text/event-stream answer one event at a time (MCP), so that
   * the cap is on each event; otherwise (A2A, whose SDK reads the body of SendMessage whole
   * whatever its type) it is on each body.
   */
  eventStreams: boolean;
}

/**
 * Runs one call to an agent, ended after the timeout or by an answer past MAX_ANSWER_BYTES.
 * Whatever it throws becomes an AgentCallError: the timeout, the answer's size, the network's
 * failures, or an answer the SDKs could not use.
 */
export async function runCall<T>(settings: CallSettings, requestId: string, run: (call: AgentCall) => Promise<T>): Promise<T> {
  const timeout = AbortSignal.timeout(settings.timeoutSeconds * 1000);
  // An SDK reading an event stream reports a failed read to no one awaiting it: the call is ended with it instead.
  const tooLarge = new AbortController();
  const signal = AbortSignal.any([timeout, tooLarge.signal]);
  const fetchAgent = callFetch(settings, signal, requestId, (error) => tooLarge.abort(error));
  try {
    return await run({ signal, fetch: fetchAgent });
  } catch (error) {
    if (tooLarge.signal.aborted) throw tooLarge.signal.reason;
    if (timeout.aborted) {
      throw new AgentCallError('timeout', `The agent did not answer within ${settings.timeoutSeconds} s`, { cause: error });
    }
    if (error instanceof AgentCallError) throw error;
    // What the SDKs throw for an HTTP error status, a body that is no JSON-RPC response, a mismatched id.
    throw new AgentCallError('invalid_response', 'The agent did not answer with a valid response', { cause: error });
  }
}

/** `fetch` for one call: ended by `signal`, naming the routed request to the agent (X-Request-Id), each answer capped. */
function callFetch(
  settings: CallSettings,
  signal: AbortSignal,
  requestId: string,
  onTooLarge: (error: AgentCallError) => void,
): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('x-request-id', requestId);
    const response = await settings.fetch(input, {
      ...init,
      headers,
      signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
    });
    if (!response.body) return response;
    const perEvent = settings.eventStreams && response.ok && isEventStream(response);
    return new Response(response.body.pipeThrough(answerCap(perEvent, onTooLarge)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Whether `response` is a text/event-stream (its media type, as the MCP SDK reads it). */
export function isEventStream(response: Response): boolean {
  return response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() === 'text/event-stream';
}

/** Passes an answer's bytes on until the body, or with `perEvent` one event, passes MAX_ANSWER_BYTES; then fails. */
function answerCap(perEvent: boolean, onTooLarge: (error: AgentCallError) => void): TransformStream<Uint8Array, Uint8Array> {
  let stream = EVENT_STREAM_START;
  let bodyBytes = 0;
  return new TransformStream({
    transform(chunk, controller) {
      if (perEvent) stream = afterEventStreamBytes(stream, chunk);
      else bodyBytes += chunk.byteLength;
      if ((perEvent ? stream.largestEventBytes : bodyBytes) <= MAX_ANSWER_BYTES) {
        controller.enqueue(chunk);
        return;
      }
      const what = perEvent ? "An event of the agent's answer" : "The agent's answer";
      const error = new AgentCallError('invalid_response', `${what} is larger than ${MAX_ANSWER_BYTES / 2 ** 20} MiB`);
      controller.error(error);
      onTooLarge(error);
    },
  });
}

/**
 * Where a text/event-stream stands: the bytes of the event under way and of the largest event so
 * far, whether a line starts next, and whether the last byte was a CR.
 */
export interface EventStreamState {
  eventBytes: number;
  largestEventBytes: number;
  atLineStart: boolean;
  afterCr: boolean;
}

export const EVENT_STREAM_START: EventStreamState = { eventBytes: 0, largestEventBytes: 0, atLineStart: true, afterCr: false };

const LF = 0x0a;
const CR = 0x0d;

/**
 * Pure: `state` after `bytes` of a text/event-stream. An empty line (a line end at the start of a
 * line; CRLF, LF and CR each end one, a CRLF counting as one byte) ends an event, and the next
 * one's bytes count from 0.
 */
export function afterEventStreamBytes(state: EventStreamState, bytes: Uint8Array): EventStreamState {
  let { eventBytes, largestEventBytes, atLineStart, afterCr } = state;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte === LF && afterCr) {
      afterCr = false;
      continue;
    }
    afterCr = byte === CR;
    const lineEnd = byte === CR || byte === LF;
    eventBytes++;
    if (lineEnd && atLineStart) {
      largestEventBytes = Math.max(largestEventBytes, eventBytes);
      eventBytes = 0;
    }
    atLineStart = lineEnd;
  }
  return { eventBytes, largestEventBytes: Math.max(largestEventBytes, eventBytes), atLineStart, afterCr };
}

/** A response's JSON body; an AgentCallError naming `who` when it is not JSON, or nests too deep to pass on. */
export async function readJsonBody(response: Response, who: string): Promise<unknown> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw new AgentCallError('invalid_response', `${who} answered HTTP ${response.status} without JSON`);
  }
  return usableAnswer(body, who);
}

/**
 * `answer` unless it nests deeper than a request may (MAX_INPUT_NESTING): answers are passed on
 * with JSON.stringify, which overflows the stack some thousands of levels down (a 10 KB answer).
 */
export function usableAnswer<T>(answer: T, who: string): T {
  if (nestsDeeperThan(answer)) {
    throw new AgentCallError(
      'invalid_response',
      `${who} answered with objects and arrays nested more than ${MAX_INPUT_NESTING} levels deep`,
    );
  }
  return answer;
}

/**
 * The agent's JSON-RPC response to `request`; an AgentCallError when the body is none, or is the
 * response to another request.
 */
export async function readJsonRpcAnswer(response: Response, request: JsonRpcRequest): Promise<Record<string, unknown>> {
  const answer = await readJsonBody(response, 'The agent');
  if (typeof answer !== 'object' || answer === null || !('jsonrpc' in answer)) {
    throw new AgentCallError('invalid_response', `The agent answered HTTP ${response.status} without a JSON-RPC response`);
  }
  const rpcAnswer = answer as Record<string, unknown>;
  if (!answersRequest(rpcAnswer, request)) {
    throw new AgentCallError('invalid_response', 'The agent answered with the response to another JSON-RPC request');
  }
  return rpcAnswer;
}

/**
 * Pure: whether a JSON-RPC response answers `request` (JSON-RPC 2.0): its id is the request's, or
 * null in an error about a request whose id the agent could not read.
 */
export function answersRequest(answer: Record<string, unknown>, request: JsonRpcRequest): boolean {
  return answer.id === (request.id ?? null) || (answer.id === null && answer.error !== undefined);
}
