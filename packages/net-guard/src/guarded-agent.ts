/**
 * An undici dispatcher whose every connection goes to an address checked against the rules of
 * addresses.ts. The host is resolved here, every address it resolves to is checked (one refused
 * address refuses the host), and the socket is opened to the checked address itself, so DNS
 * rebinding between the check and the connection, or a redirect to another host, cannot reach a
 * refused address. TLS still verifies the certificate against the host name. Connections are
 * kept alive between requests (undici's Agent pools them per origin).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { type AddressPolicy, type Refusal, refusedAddress, refusedHost } from './addresses.js';

/** The addresses a host name resolves to (dns.lookup, which follows /etc/hosts as the system does). */
export type Resolve = (hostname: string) => Promise<{ address: string }[]>;

const resolveHost: Resolve = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** A connection refused by the address rules, before any packet was sent. */
export class AddressRefusedError extends Error {}

export interface GuardedAgentOptions {
  policy: AddressPolicy;
  resolve?: Resolve;
  /** The message of a refusal: of the host as written (`resolved` false) or of an address it resolves to. */
  describe(refusal: Refusal, resolved: boolean): string;
  /** Passed on to undici's Agent (keep-alive and pool settings, timeouts). */
  agent?: Omit<Agent.Options, 'connect'>;
}

/** The address a connection to `hostname` may go to, or an AddressRefusedError. */
export function addressChecker(options: Pick<GuardedAgentOptions, 'policy' | 'resolve' | 'describe'>) {
  const resolve = options.resolve ?? resolveHost;
  return async (hostname: string): Promise<string> => {
    const refusal = refusedHost(hostname, options.policy);
    if (refusal) throw new AddressRefusedError(options.describe(refusal, false));
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(host) ? [host] : (await resolve(host)).map((entry) => entry.address);
    if (addresses.length === 0) throw new Error(`${hostname} resolves to no address`);
    for (const address of addresses) {
      const refused = refusedAddress(address, options.policy);
      if (refused) throw new AddressRefusedError(options.describe(refused, true));
    }
    return addresses[0]!;
  };
}

/** An undici Agent that connects only to allowed addresses (see above). */
export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const checkedAddress = addressChecker(options);
  const connect = buildConnector({});
  return new Agent({
    ...options.agent,
    connect: (target, callback) => {
      checkedAddress(target.hostname).then(
        // The socket goes to the checked address; TLS takes its server name from the target's host.
        (address) => connect({ ...target, hostname: address }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
}

/** Whether `error` or one of its causes is an AddressRefusedError (undici wraps connection errors). */
export function addressRefusal(error: unknown): AddressRefusedError | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof AddressRefusedError) return cause;
  }
  return undefined;
}
