import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { requireOrgAdmin } from '../access/index.js';
import type { Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import { forwardToAgent, routeToAgent, routeToProject } from './routing.js';
import {
  agentList,
  agentParams,
  agentSchema,
  createAgentBody,
  gatewayAnswer,
  gatewayBody,
  gatewayHeaders,
  rateLimitBody,
  rateLimitSchema,
  routeBody,
  routeProjectBody,
  routeResultList,
  routeResultSchema,
  updateAgentBody,
} from './schemas.js';
import { archiveAgent, createAgent, getAgent, getRateLimits, listAgents, updateAgent, updateRateLimits } from './service.js';

const RATE_LIMITED =
  "Each call takes one request from each of the agent's rate limits (per second, minute and hour); when one has none left the answer is 429 with Retry-After, and the agent is not called.";

export function agentRoutes(api: UserApi, deps: Deps): void {
  // Routing first: its paths are literal, and read better before the {agent_id} ones they sit beside.
  api.route({
    method: 'post',
    path: '/api/v1/agents/route',
    summary: 'Send a message to an agent',
    description: `The agent must be active (409) and, with project_id, assigned to that project (404). A2A agents get SendMessage (A2A 1.0) or message/send (0.3), as their card declares; MCP agents a tools/call. ${RATE_LIMITED} The agent's answer, or its error, timeout or failure, is in the 200 result.`,
    tags: ['agents'],
    body: routeBody,
    response: routeResultSchema,
    errors: [404, 409, 429],
    handler: ({ body, actor }) => routeToAgent(deps, actor, body),
  });
  api.route({
    method: 'post',
    path: '/api/v1/agents/route/project',
    summary: 'Send a message to every active agent of a project',
    description: `Sent to the agents at the same time (COLLAB_AGENT_ROUTE_CONCURRENCY at most), one result per agent, oldest agent first. An agent over its rate limit, or whose protocol cannot take the message, gets an error in its result; the others are sent the message all the same.`,
    tags: ['agents'],
    body: routeProjectBody,
    response: routeResultList,
    errors: [404],
    handler: ({ body, actor }) => routeToProject(deps, actor, body),
  });
  api.route({
    method: 'post',
    path: '/api/v1/agents',
    summary: "Register an agent in the caller's tenant, assigned to a project",
    description:
      'Org admins only (403 otherwise). The project must be live (404). endpoint_url must be http(s); hosts that are link-local or cloud metadata addresses are refused (422), and private or loopback ones unless COLLAB_AGENT_ALLOW_PRIVATE is set; the addresses a name resolves to are checked at every call. Rate limits start at the configured defaults.',
    tags: ['agents'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    body: createAgentBody,
    status: 201,
    response: agentSchema,
    errors: [403, 404],
    handler: ({ body, actor }) => createAgent(deps, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/agents',
    summary: "List the agents of the caller's tenant, oldest first",
    tags: ['agents'],
    query: listQuery,
    response: agentList,
    handler: ({ query, actor }) => listAgents(deps, actor, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/agents/{agent_id}',
    summary: 'Get an agent',
    tags: ['agents'],
    params: agentParams,
    response: agentSchema,
    errors: [404],
    handler: ({ params, actor }) => getAgent(deps, actor, params.agent_id),
  });
  api.route({
    method: 'patch',
    path: '/api/v1/agents/{agent_id}',
    summary: 'Update an agent',
    description:
      'Org admins only (403 otherwise), as where an agent is called and whether it is routed to are. endpoint_url is checked as on creation (422). An inactive agent is not routed to.',
    tags: ['agents'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: agentParams,
    body: updateAgentBody,
    response: agentSchema,
    errors: [403, 404],
    handler: ({ params, body, actor }) => updateAgent(deps, actor, params.agent_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/agents/{agent_id}',
    summary: 'Delete an agent (soft), with its project assignments',
    description: 'Org admins only (403 otherwise), as removing an agent from a project is.',
    tags: ['agents'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: agentParams,
    status: 204,
    errors: [403, 404],
    handler: ({ params, actor }) => archiveAgent(deps.db, actor, params.agent_id),
  });
  api.route({
    method: 'get',
    path: '/api/v1/agents/{agent_id}/rate-limits',
    summary: "Get an agent's rate limits",
    tags: ['agents'],
    params: agentParams,
    response: rateLimitSchema,
    errors: [404],
    handler: ({ params, actor }) => getRateLimits(deps.db, actor, params.agent_id),
  });
  api.route({
    method: 'put',
    path: '/api/v1/agents/{agent_id}/rate-limits',
    summary: "Set an agent's rate limits",
    description:
      'Org admins only (403 otherwise). Requests per second, minute and hour, each a non-negative integer given as a number or a string (0: no limit in that window). Requests already counted stay counted.',
    tags: ['agents'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: agentParams,
    body: rateLimitBody,
    response: rateLimitSchema,
    errors: [403, 404],
    handler: ({ params, body, actor }) => updateRateLimits(deps.db, actor, params.agent_id, body),
  });
  api.route({
    method: 'post',
    path: '/api/v1/agents/{agent_id}/gateway',
    summary: 'Pass a JSON-RPC request through to an agent',
    description: `The body is one JSON-RPC 2.0 request, sent to the agent as it is but for its task, context and session ids, which are bound to the caller's tenant as in routed messages. A2A: to the card's JSON-RPC interface of the version the method belongs to (SendMessage: 1.0, message/send: 0.3); streaming methods are refused with JSON-RPC error -32004. MCP: to the endpoint, with Mcp-Session-Id and Mcp-Protocol-Version passed on both ways. The agent's JSON-RPC response comes back with 200 (202 and no body for an MCP notification); when the agent gives none (unreachable, timeout, refused address, no JSON-RPC) the answer is 502. ${RATE_LIMITED}`,
    tags: ['agents'],
    params: agentParams,
    headers: gatewayHeaders,
    body: gatewayBody,
    response: gatewayAnswer,
    errors: [404, 409, 429, 502],
    handler: async ({ params, headers, body, actor, res }) => {
      const answer = await forwardToAgent(deps, actor, params.agent_id, body, headers);
      res.status(answer.status).set(answer.headers);
      if (!answer.body) {
        res.end();
        return undefined;
      }
      if ('json' in answer.body) return answer.body.json as Record<string, unknown>;
      // Sent as it comes; headers first, so that the API does not answer again.
      res.type(answer.body.contentType).flushHeaders();
      await pipeline(Readable.fromWeb(answer.body.stream as Parameters<typeof Readable.fromWeb>[0]), res).catch(() =>
        res.destroy(),
      );
      return undefined;
    },
  });
}
