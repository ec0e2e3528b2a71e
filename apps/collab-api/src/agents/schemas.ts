import { z } from 'zod';
import { archivedAt, description, displayName, idParams, oneOf, timestamp } from '../shared/schemas.js';
import { parseRateLimit } from './rate-limits.js';
import { MAX_RATE_LIMIT } from './settings.js';

export const AGENT_PROTOCOLS = ['A2A', 'MCP'] as const;
export const AGENT_STATUSES = ['active', 'inactive'] as const;

const jsonObject = z.record(z.string(), z.unknown());

/**
 * http or https, without credentials (they would end up in logs and records). Which hosts and
 * addresses are allowed is checked by the service (requireAllowedEndpoint) and again at every call.
 */
const endpointUrl = z
  .string()
  .max(2048)
  .refine(
    (value) => {
      const url = URL.parse(value);
      return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
    },
    { message: 'Must be an http or https URL without credentials', params: { type: 'url_parsing' } },
  )
  .meta({
    description:
      "The agent's base URL. A2A: its card is read at `.well-known/agent-card.json` under this URL. MCP: its streamable HTTP endpoint.",
    example: 'https://agents.example.com/support',
  });

export const agentSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    protocol: z.enum(AGENT_PROTOCOLS),
    endpoint_url: z.string(),
    capabilities: jsonObject.nullable(),
    agent_metadata: jsonObject.nullable(),
    status: z.enum(AGENT_STATUSES).meta({ description: 'Inactive agents are kept but not routed to' }),
    created_at: timestamp,
    archived_at: archivedAt,
    gateway_url: z.string().meta({
      description: "The agent's JSON-RPC pass-through in this service: `{PUBLIC_BASE_URL}/api/v1/agents/{agent_id}/gateway`",
    }),
  })
  .meta({ id: 'Agent' });

export type AgentResponse = z.input<typeof agentSchema>;

export const agentList = z.object({ agents: z.array(agentSchema) }).meta({ id: 'AgentList' });

export const agentParams = idParams('agent_id');

export const createAgentBody = z.strictObject({
  name: displayName(),
  description: description.nullish(),
  protocol: oneOf(AGENT_PROTOCOLS),
  endpoint_url: endpointUrl,
  capabilities: jsonObject.nullish(),
  agent_metadata: jsonObject.nullish(),
  project_id: z.uuid().meta({ description: 'The project the agent is assigned to, in the same transaction' }),
  role: displayName().nullish().meta({ description: "The agent's role in that project" }),
});

export type CreateAgentInput = z.output<typeof createAgentBody>;

export const updateAgentBody = z.strictObject({
  name: displayName().nullish().meta({ description: 'Absent or null keeps the current name' }),
  description: description.nullish().meta({ description: 'Absent keeps the current description; null or "" removes it' }),
  protocol: oneOf(AGENT_PROTOCOLS).nullish().meta({ description: 'Absent or null keeps the current protocol' }),
  endpoint_url: endpointUrl.nullish(),
  capabilities: jsonObject.nullish().meta({ description: 'Absent keeps the current capabilities; null removes them' }),
  agent_metadata: jsonObject.nullish().meta({ description: 'Absent keeps the current metadata; null removes it' }),
  status: oneOf(AGENT_STATUSES).nullish().meta({ description: 'Absent or null keeps the current status' }),
});

export type UpdateAgentInput = z.output<typeof updateAgentBody>;

const limitOutput = z.string().meta({ description: 'A non-negative integer, as a string; 0: no limit', example: '10' });

export const rateLimitSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    max_requests_per_second: limitOutput,
    max_requests_per_minute: limitOutput,
    max_requests_per_hour: limitOutput,
  })
  .meta({ id: 'AgentRateLimit' });

export type RateLimitResponse = z.input<typeof rateLimitSchema>;

const limitInput = z
  .union([z.number(), z.string()])
  .transform((value, ctx) => {
    const limit = parseRateLimit(value);
    if (limit === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `Input should be an integer from 0 to ${MAX_RATE_LIMIT}, as a number or a string of digits`,
        params: { type: 'int_parsing' },
      });
      return z.NEVER;
    }
    return limit;
  })
  .meta({ description: `A non-negative integer (at most ${MAX_RATE_LIMIT}), as a number or a string; 0: no limit` });

export const rateLimitBody = z.strictObject({
  max_requests_per_second: limitInput,
  max_requests_per_minute: limitInput,
  max_requests_per_hour: limitInput,
});

export type RateLimitInput = z.output<typeof rateLimitBody>;

const routedMessage = jsonObject.meta({
  description:
    'A2A agents: an A2A 1.0 message (`{"role": "ROLE_USER", "parts": [{"text": "..."}]}`), an A2A 0.3 one (`{"role": "user", "parts": [{"kind": "text", "text": "..."}]}`) or `{"text": "..."}`, converted to the version the agent\'s card declares; `taskId` and `contextId` continue a task or context that a route result handed out. MCP agents: `{"tool": "...", "arguments": {...}}`. Other fields are ignored, so one message may suit both.',
});

export const routeBody = z.strictObject({
  agent_id: z.uuid(),
  message: routedMessage,
  project_id: z.uuid().nullish().meta({ description: 'When given, the agent must be assigned to this project' }),
});

export const routeProjectBody = z.strictObject({ project_id: z.uuid(), message: routedMessage });

export const routeResultSchema = z
  .object({
    id: z.string().meta({ description: "This routed request's id, also sent to the agent as X-Request-Id" }),
    agent_id: z.uuid(),
    protocol: z.enum(AGENT_PROTOCOLS),
    protocol_version: z.string().nullable().meta({
      description: 'The protocol version spoken: A2A `1.0` or `0.3`, MCP e.g. `2025-06-18`; null when the agent gave no answer',
    }),
    result: jsonObject.nullable().meta({
      description:
        'The agent\'s JSON-RPC result, in its protocol version\'s shape: A2A 1.0 `{"message"}` or `{"task"}`, A2A 0.3 a message or task with `kind`, MCP a tools/call result. Task and context ids in it are bound to the caller\'s tenant.',
    }),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).nullable().meta({
      description:
        "The agent's JSON-RPC error; or, when the agent gave no answer, code -32000 with `data.reason` one of `timeout`, `unreachable`, `address_refused`, `invalid_response`, `rate_limited` (project routes; with `data.retry_after_seconds`); or -32602 with `data.reason` `invalid_message` when the message does not suit the agent's protocol (project routes).",
    }),
    duration_ms: z.number().int(),
  })
  .meta({ id: 'RouteResult' });

export type RouteResult = z.input<typeof routeResultSchema>;

export const routeResultList = z.array(routeResultSchema).meta({ id: 'RouteResultList' });

export const gatewayBody = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  params: z.union([jsonObject, z.array(z.unknown())]).optional(),
});

export const gatewayHeaders = z.object({
  'mcp-session-id': z.string().max(1024).optional(),
  'mcp-protocol-version': z.string().max(64).optional(),
});

export const gatewayAnswer = z.record(z.string(), z.unknown()).meta({
  id: 'JsonRpcResponse',
  description: "The agent's JSON-RPC response (a stream of them, text/event-stream, when an MCP agent streams)",
});
