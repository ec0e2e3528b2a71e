import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { NotFoundError, RateLimitedError, UpstreamError, ValidationError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import { AgentCallError, type AgentClient, type JsonRpcError, type JsonRpcRequest } from '../adapters/agents/index.js';
import type { Deps } from '../deps.js';
import type { Agent, AgentRateLimit } from '../generated/prisma/client.js';
import { findProject } from '../projects/service.js';
import { oldestFirst } from '../shared/schemas.js';
import { limitsOf } from './rate-limits.js';
import type { RouteResult } from './schemas.js';
import { defaultLimits, requireActive } from './service.js';
import { tenantIds } from './task-ids.js';

export type RoutingDeps = Pick<Deps, 'db' | 'config' | 'logger' | 'agents' | 'agentRequests' | 'agentIdSecret'>;

type AgentWithLimits = Agent & { rateLimit: AgentRateLimit | null };

/**
 * Sends `message` to one agent of the actor's tenant and answers with its route result. The
 * agent must be live (404), assigned to `project_id` when one is given (404), and active (409);
 * the message must suit its protocol (422); one unit is taken from each of its rate-limit
 * windows (429 when one has none left, and the agent is not called). The agent's own errors,
 * timeouts and failures to reach it come back in the result's `error`.
 */
export async function routeToAgent(
  deps: RoutingDeps,
  actor: Actor,
  input: { agent_id: string; message: Record<string, unknown>; project_id?: string | null },
): Promise<RouteResult> {
  const agent = await findAgentWithLimits(deps, actor, input.agent_id);
  if (input.project_id) {
    const project = await findProject(deps.db, actor, input.project_id);
    const assigned = await deps.db.projectAgent.count({ where: { projectId: project.id, agentId: agent.id, archivedAt: null } });
    if (assigned === 0) throw new NotFoundError('The agent is not assigned to this project');
  }
  requireActive(agent);
  const client = deps.agents.byProtocol[agent.protocol];
  const message = client.readMessage(input.message);
  await takeRequest(deps, agent);
  return send(deps, actor, agent, client, message);
}

/**
 * Sends `message` to every active agent of a live project of the actor's tenant (404
 * otherwise), COLLAB_AGENT_ROUTE_CONCURRENCY at a time, and answers with one route result per
 * agent, oldest agent first. What goes wrong with one agent (a message its protocol cannot
 * take, its rate limit, its failure) is in its result and never keeps the others from theirs.
 */
export async function routeToProject(
  deps: RoutingDeps,
  actor: Actor,
  input: { project_id: string; message: Record<string, unknown> },
): Promise<RouteResult[]> {
  const project = await findProject(deps.db, actor, input.project_id);
  const agents = await deps.db.agent.findMany({
    where: { ...liveIn(actor), status: 'active', projects: { some: { projectId: project.id, archivedAt: null } } },
    include: { rateLimit: true },
    ...oldestFirst(),
  });
  return inParallel(agents, deps.config.COLLAB_AGENT_ROUTE_CONCURRENCY, async (agent) => {
    const client = deps.agents.byProtocol[agent.protocol];
    try {
      const message = client.readMessage(input.message);
      await takeRequest(deps, agent);
      return await send(deps, actor, agent, client, message);
    } catch (error) {
      if (error instanceof ValidationError) {
        return unanswered(agent, {
          code: -32602,
          message: error.message,
          data: { reason: 'invalid_message', issues: error.issues },
        });
      }
      if (error instanceof RateLimitedError) {
        return unanswered(agent, { code: -32000, message: error.message, data: { reason: 'rate_limited', ...error.details } });
      }
      throw error;
    }
  });
}

/**
 * Passes one JSON-RPC request through to an agent of the actor's tenant (404), active (409),
 * under its rate limits (429). Ids are bound to the tenant as in routed messages; a call that
 * gets no usable answer is 502, with a message that never names the agent's address.
 */
export async function forwardToAgent(
  deps: RoutingDeps,
  actor: Actor,
  agentId: string,
  request: JsonRpcRequest,
  headers: Record<string, string | undefined>,
) {
  const agent = await findAgentWithLimits(deps, actor, agentId);
  requireActive(agent);
  await takeRequest(deps, agent);
  const requestId = randomUUID();
  try {
    return await deps.agents.byProtocol[agent.protocol].forward(agent.endpointUrl, request, {
      requestId,
      ids: tenantIds(deps.agentIdSecret, actor.tenantId),
      headers,
    });
  } catch (error) {
    if (!(error instanceof AgentCallError)) throw error;
    logFailure(deps, agent, requestId, error);
    throw new UpstreamError(error.message);
  }
}

async function findAgentWithLimits(deps: RoutingDeps, actor: Actor, agentId: string): Promise<AgentWithLimits> {
  const agent = await deps.db.agent.findFirst({ where: { id: agentId, ...liveIn(actor) }, include: { rateLimit: true } });
  if (!agent) throw new NotFoundError('Agent not found');
  return agent;
}

function takeRequest(deps: RoutingDeps, agent: AgentWithLimits): Promise<void> {
  return deps.agentRequests.consume(agent.id, agent.rateLimit ? limitsOf(agent.rateLimit) : defaultLimits(deps.config));
}

async function send(
  deps: RoutingDeps,
  actor: Actor,
  agent: Agent,
  client: AgentClient,
  message: Readonly<Record<string, unknown>>,
): Promise<RouteResult> {
  const id = randomUUID();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const reply = await client.send(agent.endpointUrl, message, {
      requestId: id,
      ids: tenantIds(deps.agentIdSecret, actor.tenantId),
    });
    return {
      id,
      agent_id: agent.id,
      protocol: agent.protocol,
      protocol_version: reply.protocolVersion,
      result: (reply.result as Record<string, unknown> | undefined) ?? null,
      error: reply.error ?? null,
      duration_ms: elapsed(),
    };
  } catch (error) {
    if (!(error instanceof AgentCallError)) throw error;
    logFailure(deps, agent, id, error);
    return {
      ...unanswered(agent, { code: -32000, message: error.message, data: { reason: error.reason } }),
      id,
      duration_ms: elapsed(),
    };
  }
}

function unanswered(agent: Agent, error: JsonRpcError): RouteResult {
  return {
    id: randomUUID(),
    agent_id: agent.id,
    protocol: agent.protocol,
    protocol_version: null,
    result: null,
    error,
    duration_ms: 0,
  };
}

function logFailure(deps: RoutingDeps, agent: Agent, requestId: string, error: AgentCallError): void {
  // The cause names the address and the system's reason; it stays in the log, out of the answer.
  deps.logger.warn(
    { agentId: agent.id, requestId, reason: error.reason, cause: error.cause instanceof Error ? error.cause.message : undefined },
    'Agent call failed',
  );
}

/** `fn` over `items` with at most `limit` calls under way, results in the order of `items`. */
async function inParallel<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
