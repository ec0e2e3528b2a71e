/**
 * A2A agents, through @a2a-js/sdk 1.x. The agent card (`.well-known/agent-card.json` under the
 * endpoint URL, cached) decides the protocol: the SDK's ClientFactory, with its v0.3
 * compatibility on, sends `SendMessage` to an agent whose card lists A2A 1.0 interfaces and
 * `message/send` to one whose card is 0.3's. Every request, the card's included, goes through
 * the checked fetch of network.ts.
 */
import { AGENT_CARD_PATH, type AgentCard, Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { isLegacyJsonRpcMethod } from '@a2a-js/sdk/compat/v0_3';
import { A2AError, isJsonRpcError, toJsonRpcError } from '@a2a-js/sdk/errors';
import { LRUCache } from 'lru-cache';
import { mapTaskIds, readA2aMessage, unboundId, v1ToV03Result } from './a2a-shapes.js';
import { AgentCallError, type AgentClient, type ForwardedAnswer, type JsonRpcError, type JsonRpcRequest } from './interface.js';
import { readJsonBody, readJsonRpcAnswer, runCall } from './network.js';

export interface A2aClientOptions {
  /** The checked fetch of network.ts. */
  fetch: typeof fetch;
  timeoutSeconds: number;
  /** How long an agent card is used before it is read again. */
  cardTtlSeconds: number;
}

const LEGACY = { enabled: true };
// Cards of this many endpoints are kept; the least recently used goes first.
const MAX_CACHED_CARDS = 1000;
// Not passed through the gateway: their answer is a stream of events whose ids would need mapping one by one.
const STREAMING_METHODS = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);
/**
 * What the gateway passes, of A2A 1.0 and 0.3: the methods that name no task, or name the caller's
 * own by ids bound to its tenant (task-ids.ts). An agent knows no tenants: a method that lists its
 * tasks unasked would hand the caller every tenant's (ListTasks passes only with a contextId, which
 * binds it to the caller's), and a method not known here could do the same.
 */
const GATEWAY_METHODS = new Set([
  'SendMessage',
  'GetTask',
  'CancelTask',
  'ListTasks',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
  'message/send',
  'tasks/get',
  'tasks/cancel',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
]);

/** Pure: why the gateway does not pass `request` to an A2A agent (a JSON-RPC error), or undefined when it does. */
export function gatewayRefusal(request: JsonRpcRequest): JsonRpcError | undefined {
  if (STREAMING_METHODS.has(request.method)) {
    return { code: -32004, message: `${request.method} is not passed through the gateway; send without streaming` };
  }
  if (!GATEWAY_METHODS.has(request.method)) {
    return {
      code: -32601,
      message: `${request.method} is not passed through the gateway: only A2A methods that name no task, or the caller's own, are`,
    };
  }
  const unbound = unboundId(request.params, request.method);
  if (unbound) {
    return {
      code: -32602,
      message: `${unbound} must be a string or null: task and context ids are bound to the caller's tenant`,
    };
  }
  const params = (typeof request.params === 'object' && request.params !== null ? request.params : {}) as Record<string, unknown>;
  // Either spelling, as the agent reads either (a2a-shapes.ts ID_FIELDS).
  const contextId = params.contextId ?? params.context_id;
  if (request.method === 'ListTasks' && (typeof contextId !== 'string' || contextId === '')) {
    return {
      code: -32602,
      message:
        "ListTasks passes through the gateway with a contextId (or context_id) only: the agent's whole list holds other tenants' tasks",
    };
  }
  return undefined;
}

export function createA2aClient(options: A2aClientOptions): AgentClient {
  // The SDK reads a SendMessage answer whole whatever its type: every body is capped whole.
  const calls = { fetch: options.fetch, timeoutSeconds: options.timeoutSeconds, eventStreams: false };
  // No cache at a TTL of 0: a card is read for every call (lru-cache's ttl 0 would keep it for ever).
  const cards =
    options.cardTtlSeconds > 0
      ? new LRUCache<string, AgentCard>({ max: MAX_CACHED_CARDS, ttl: options.cardTtlSeconds * 1000 })
      : undefined;
  const resolver = new DefaultAgentCardResolver({ legacyCompat: LEGACY });

  const cardOf = async (endpointUrl: string, fetchCard: typeof fetch): Promise<AgentCard> => {
    const cached = cards?.get(endpointUrl);
    if (cached) return cached;
    const url = new URL(AGENT_CARD_PATH, endpointUrl.endsWith('/') ? endpointUrl : `${endpointUrl}/`);
    const response = await fetchCard(url, { headers: { 'A2A-Version': '1.0', accept: 'application/json' } });
    if (!response.ok) {
      throw new AgentCallError('invalid_response', `The agent's card could not be read (HTTP ${response.status})`);
    }
    const card = resolver.normalizeAgentCard(await readJsonBody(response, "The agent's card"));
    cards?.set(endpointUrl, card);
    return card;
  };

  return {
    readMessage: readA2aMessage,

    send: (endpointUrl, message, call) =>
      runCall(calls, call.requestId, async ({ signal, fetch: fetchImpl }) => {
        const factory = new ClientFactory({
          transports: [
            new JsonRpcTransportFactory({ fetchImpl, legacyCompat: LEGACY }),
            new RestTransportFactory({ fetchImpl, legacyCompat: LEGACY }),
          ],
          cardResolver: resolver,
        });
        const card = await cardOf(endpointUrl, fetchImpl);
        const client = await factory.createFromAgentCard(card).catch((error: unknown) => {
          throw new AgentCallError(
            'invalid_response',
            "The agent's card offers no interface this service speaks (A2A 1.0 or 0.3 over JSON-RPC or HTTP+JSON)",
            { cause: error },
          );
        });
        const protocolVersion = client.protocolVersion;
        try {
          const sent = await client.sendMessage(SendMessageRequest.fromJSON({ message: mapTaskIds(message, call.ids.toAgent) }), {
            signal,
          });
          const result = 'messageId' in sent ? { message: Message.toJSON(sent) } : { task: Task.toJSON(sent) };
          const shaped = isLegacyVersion(protocolVersion) ? v1ToV03Result(result) : result;
          return { protocolVersion, result: mapTaskIds(shaped, call.ids.fromAgent) };
        } catch (error) {
          const agentError = answeredError(error);
          if (agentError) return { protocolVersion, error: agentError };
          throw error;
        }
      }),

    forward: (endpointUrl, request, call) =>
      runCall(calls, call.requestId, async ({ fetch: fetchImpl }): Promise<ForwardedAnswer> => {
        const refusal = gatewayRefusal(request);
        if (refusal) return rpcError(request, refusal);
        const legacy = isLegacyJsonRpcMethod(request.method);
        const card = await cardOf(endpointUrl, fetchImpl);
        const target = card.supportedInterfaces.find(
          (entry) => entry.protocolBinding.toUpperCase() === 'JSONRPC' && isLegacyVersion(entry.protocolVersion) === legacy,
        );
        if (!target) {
          return rpcError(request, {
            code: -32009,
            message: `The agent offers no A2A ${legacy ? '0.3' : '1.0'} JSON-RPC interface`,
          });
        }
        const response = await fetchImpl(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', 'A2A-Version': legacy ? '0.3' : '1.0' },
          body: JSON.stringify({ ...request, params: mapTaskIds(request.params, call.ids.toAgent, request.method) }),
        });
        const answer = await readJsonRpcAnswer(response, request);
        return { status: 200, body: { json: mapTaskIds(answer, call.ids.fromAgent) }, headers: {} };
      }),
  };
}

/** Whether an A2A protocol version is 0.3's line (the SDK takes an empty one for 0.3 too). */
function isLegacyVersion(version: string): boolean {
  const trimmed = version.trim();
  return trimmed === '' || trimmed.startsWith('0.');
}

/** The agent's own error answer, as JSON-RPC's error object; undefined for anything that is no answer. */
function answeredError(error: unknown): JsonRpcError | undefined {
  if (isJsonRpcError(error)) {
    return { code: error.envelopeCode, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
  }
  // HTTP+JSON agents answer with A2A's errors, which have JSON-RPC codes too.
  if (error instanceof A2AError) return toJsonRpcError(error);
  return undefined;
}

function rpcError(request: JsonRpcRequest, error: JsonRpcError): ForwardedAnswer {
  return { status: 200, body: { json: { jsonrpc: '2.0', id: request.id ?? null, error } }, headers: {} };
}
