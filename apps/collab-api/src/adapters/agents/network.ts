/**
 * The only way requests reach agents: a fetch whose every connection, redirects included, goes to
 * an address checked against the rules of addresses.ts. The host is resolved here, every address
 * it resolves to is checked (one refused address refuses the host), and the socket is opened to
 * the checked address itself, so DNS rebinding between the check and the connection, or a
 * redirect to another host, cannot reach a refused address. TLS still verifies the certificate
 * against the host name.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { type AddressPolicy, refusalMessage, refusedAddress, refusedHost } from './addresses.js';
import { AgentCallError } from './interface.js';

/** The addresses a host name resolves to (dns.lookup, which follows /etc/hosts as the system does). */
export type Resolve = (hostname: string) => Promise<{ address: string }[]>;

const resolveHost: Resolve = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** A connection refused by the address rules, before any packet was sent. */
export class AddressRefusedError extends Error {}

export interface AgentNetwork {
  fetch: typeof fetch;
  close(): Promise<void>;
}

export function createAgentNetwork(options: { policy: AddressPolicy; resolve?: Resolve }): AgentNetwork {
  const resolve = options.resolve ?? resolveHost;
  const connect = buildConnector({});
  const checkedAddress = async (hostname: string): Promise<string> => {
    const refusal = refusedHost(hostname, options.policy);
    if (refusal) throw new AddressRefusedError(refusalMessage("The agent's host is", refusal, 'which is not allowed'));
    const addresses = isIP(hostname) ? [hostname] : (await resolve(hostname)).map((entry) => entry.address);
    if (addresses.length === 0) throw new Error(`${hostname} resolves to no address`);
    for (const address of addresses) {
      const refused = refusedAddress(address, options.policy);
      if (refused) {
        throw new AddressRefusedError(refusalMessage("The agent's host resolves to", refused, 'which is not allowed'));
      }
    }
    return addresses[0]!;
  };
  const dispatcher = new Agent({
    connect: (target, callback) => {
      checkedAddress(target.hostname).then(
        // The socket goes to the checked address; TLS takes its server name from the target's host.
        (address) => connect({ ...target, hostname: address }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
  return {
    fetch: (async (input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) => {
      try {
        // undici's own fetch, whose Response the SDKs read like the global one.
        return await undiciFetch(input, { ...init, dispatcher });
      } catch (error) {
        if (init?.signal?.aborted) throw error;
        for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
          if (cause instanceof AddressRefusedError) {
            throw new AgentCallError('address_refused', cause.message);
          }
        }
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
