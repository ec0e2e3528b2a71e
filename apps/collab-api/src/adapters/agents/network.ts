/**
 * The only way requests reach agents: a fetch whose every connection, redirects included, goes to
 * an address checked against the rules of addresses.ts (@repo/net-guard's guarded agent: the host
 * is resolved and every address checked at each connection, and the socket opened to the checked
 * address itself, so neither DNS rebinding nor a redirect reaches a refused address).
 */
import { addressRefusal, createGuardedAgent, type Resolve } from '@repo/net-guard';
import { fetch as undiciFetch } from 'undici';
import { type AddressPolicy, refusalMessage } from './addresses.js';
import { AgentCallError } from './interface.js';

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
 * Runs one call to an agent with a signal that ends it after `seconds`. Whatever it throws becomes
 * an AgentCallError: the timeout, the network's failures, or an answer the SDKs could not use.
 */
export async function timed<T>(seconds: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(seconds * 1000);
  try {
    return await call(signal);
  } catch (error) {
    if (signal.aborted) throw new AgentCallError('timeout', `The agent did not answer within ${seconds} s`, { cause: error });
    if (error instanceof AgentCallError) throw error;
    // What the SDKs throw for an HTTP error status, a body that is no JSON-RPC response, a mismatched id.
    throw new AgentCallError('invalid_response', 'The agent did not answer with a valid response', { cause: error });
  }
}

/** `fetch` for one call: ended by `signal`, and naming the routed request to the agent (X-Request-Id). */
export function callFetch(fetchChecked: typeof fetch, signal: AbortSignal, requestId: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('x-request-id', requestId);
    return fetchChecked(input, { ...init, headers, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
  };
}

/** A response's JSON body; an AgentCallError naming `who` when it is not JSON. */
export async function readJsonBody(response: Response, who: string): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AgentCallError('invalid_response', `${who} answered HTTP ${response.status} without JSON`);
  }
}
