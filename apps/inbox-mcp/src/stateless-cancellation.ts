import type { Request } from 'express';

type Cancel = () => void;

interface JsonRpcMessage {
  id?: unknown;
  method?: unknown;
  params?: { requestId?: unknown };
}

/** JSON-RPC ids are strings or numbers: anything else names no request (and is not stringified: a nested one overflowed the stack). */
const isRequestId = (id: unknown): id is string | number => typeof id === 'string' || typeof id === 'number';

function messagesOf(body: unknown): JsonRpcMessage[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.filter((message): message is JsonRpcMessage => typeof message === 'object' && message !== null);
}

/**
 * Cancellation for stateless streamable HTTP. A client cancels a request by POSTing
 * `notifications/cancelled` with the request's id; with no session, that POST gets a server
 * instance of its own, which knows nothing of the request. This per-process registry lets it reach
 * the instance running the request, when both POSTs reach the same replica (always, with one
 * replica; behind a load balancer, with client-address affinity). Request ids are unique only per
 * client, so a request is known by the client's address and Authorization header too; and since
 * two clients may share both (two agents of one key on one host, each numbering its requests from
 * 0), a cancel that names more than one request in flight cancels none: it must never stop
 * another client's request, and the canceller's own ends with its wait. Closing the
 * response stream, which the 2026 protocol makes the way to cancel, always works: the route
 * closes the server instance when its response closes.
 */
export class InFlightRequests {
  private readonly running = new Map<string, Set<Cancel>>();

  /** Who a request comes from, as far as HTTP tells (the address honours TRUST_PROXY_HOPS). */
  static clientOf(req: Request): string {
    return `${req.ip ?? ''}\n${req.get('authorization') ?? ''}`;
  }

  /** Registers the requests of a POST body; returns the function that forgets them. */
  track(client: string, body: unknown, cancel: Cancel): () => void {
    const keys = messagesOf(body).flatMap((message) =>
      typeof message.method === 'string' && isRequestId(message.id) ? [this.key(client, message.id)] : [],
    );
    for (const key of keys) {
      const cancels = this.running.get(key) ?? new Set<Cancel>();
      cancels.add(cancel);
      this.running.set(key, cancels);
    }
    return () => {
      for (const key of keys) {
        const cancels = this.running.get(key);
        cancels?.delete(cancel);
        if (cancels?.size === 0) this.running.delete(key);
      }
    };
  }

  /** Cancels the requests that the `notifications/cancelled` of a POST body name. */
  cancelNamedIn(client: string, body: unknown): void {
    for (const message of messagesOf(body)) {
      const requestId = message.params?.requestId;
      if (message.method !== 'notifications/cancelled' || !isRequestId(requestId)) continue;
      const named = this.running.get(this.key(client, requestId));
      if (named?.size === 1) for (const cancel of named) cancel();
    }
  }

  private key(client: string, requestId: string | number): string {
    return `${client}\n${JSON.stringify(requestId)}`;
  }
}
