/** A JSON-RPC error object, as an agent answers it (or as the service reports a call that got no answer). */
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  method: string;
  id?: string | number | null;
  params?: unknown;
}

/** What the agent answered a routed message: its JSON-RPC result or error, in the protocol version it speaks. */
export type AgentReply = { protocolVersion: string | null } & (
  { result: unknown; error?: undefined } | { result?: undefined; error: JsonRpcError }
);

/** A route's `message` as one protocol takes it, made by that protocol's readMessage. */
export type RoutedMessage = Readonly<Record<string, unknown>>;

/**
 * How a caller's task, context and session ids map to the agent's, and back. The agents service
 * binds them to the caller's tenant (src/agents/task-ids.ts); the adapters apply the mapping to
 * every id field their protocol has.
 */
export interface IdBinding {
  toAgent: (id: string) => string;
  fromAgent: (id: string) => string;
}

/** Each call ends after the timeout its client was made with (COLLAB_AGENT_TIMEOUT_SECONDS). */
export interface CallOptions {
  /** Sent as X-Request-Id, so that the agent's logs can name the routed request. */
  requestId: string;
  ids: IdBinding;
}

/** The agent's HTTP answer to a forwarded JSON-RPC request, ready to pass on to the caller. */
export interface ForwardedAnswer {
  status: number;
  /** A JSON body (ids mapped), a stream to pass on as it comes (MCP's text/event-stream), or none (202). */
  body?: { json: unknown } | { stream: ReadableStream<Uint8Array>; contentType: string };
  /** Response headers the caller needs (MCP's session id, mapped). */
  headers: Record<string, string>;
}

export interface ForwardOptions extends CallOptions {
  /** Request headers the protocol needs passed on (MCP's session id and protocol version), by lower-case name. */
  headers: Record<string, string | undefined>;
}

/** One agent protocol. Adapters never see HTTP requests of the API, tenants or records. */
export interface AgentClient {
  /**
   * Reads a route's `message` as this protocol takes it; throws ValidationError, located under
   * `body.message`, when it does not fit. Called before anything is sent.
   */
  readMessage(input: unknown): RoutedMessage;
  /** Sends one message to the agent at `endpointUrl`; throws AgentCallError when the agent gave no answer. */
  send(endpointUrl: string, message: RoutedMessage, options: CallOptions): Promise<AgentReply>;
  /** Passes one JSON-RPC request through to the agent; throws AgentCallError when it gave no answer. */
  forward(endpointUrl: string, request: JsonRpcRequest, options: ForwardOptions): Promise<ForwardedAnswer>;
}

export type AgentCallFailure = 'timeout' | 'unreachable' | 'address_refused' | 'invalid_response';

/** A call that got no usable answer from the agent. The message is for the caller and never names the agent's address. */
export class AgentCallError extends Error {
  readonly reason: AgentCallFailure;

  constructor(reason: AgentCallFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AgentCallError';
    this.reason = reason;
  }
}
