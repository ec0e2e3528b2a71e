import { ConflictError, NotFoundError, ValidationError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import { refusalMessage, refusedHost } from '../adapters/agents/index.js';
import type { Database, Transaction } from '../database.js';
import type { Deps } from '../deps.js';
import { type Agent, type AgentRateLimit, Prisma } from '../generated/prisma/client.js';
import { findProject } from '../projects/service.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import { lockLive, type ParentLock } from '../shared/transaction.js';
import { limitsOf, type RateLimits } from './rate-limits.js';
import type { AgentResponse, CreateAgentInput, RateLimitInput, RateLimitResponse, UpdateAgentInput } from './schemas.js';

type AgentDeps = Pick<Deps, 'db' | 'config'>;

/** Where the service's own links start: PUBLIC_BASE_URL, or this process's address. */
function publicBaseUrl(config: Deps['config']): string {
  return config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`;
}

function toAgentResponse(agent: Agent, config: Deps['config']): AgentResponse {
  return {
    id: agent.id,
    tenant_id: agent.tenantId,
    name: agent.name,
    description: agent.description,
    protocol: agent.protocol,
    endpoint_url: agent.endpointUrl,
    capabilities: agent.capabilities as Record<string, unknown> | null,
    agent_metadata: agent.agentMetadata as Record<string, unknown> | null,
    status: agent.status,
    created_at: iso(agent.createdAt),
    archived_at: isoOrNull(agent.archivedAt),
    gateway_url: `${publicBaseUrl(config)}/api/v1/agents/${agent.id}/gateway`,
  };
}

function toRateLimitResponse(limit: AgentRateLimit): RateLimitResponse {
  const limits = limitsOf(limit);
  return {
    id: limit.id,
    agent_id: limit.agentId,
    max_requests_per_second: String(limits.second),
    max_requests_per_minute: String(limits.minute),
    max_requests_per_hour: String(limits.hour),
  };
}

/**
 * endpoint_url's host, as written: an address literal or name that agents may never be called at
 * is refused at once (422). What the name resolves to is checked at every call (network.ts).
 */
function requireAllowedEndpoint(endpointUrl: string, config: Deps['config']): void {
  const refusal = refusedHost(new URL(endpointUrl).hostname, { allowPrivate: config.COLLAB_AGENT_ALLOW_PRIVATE });
  if (refusal) {
    throw new ValidationError([
      {
        loc: ['body', 'endpoint_url'],
        msg: refusalMessage('The host is', refusal, 'which agents may not be called at'),
        type: 'value_error',
      },
    ]);
  }
}

/** A JSON column's new value: null stores SQL NULL, as a record created without it has. */
function jsonOrNull(value: Record<string, unknown> | null): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return value === null ? Prisma.DbNull : (value as Prisma.InputJsonValue);
}

/**
 * Creates the agent, its rate limits (the configured defaults) and its assignment to a live
 * project of the actor's tenant (404 otherwise), in one transaction that holds the project.
 */
export async function createAgent(deps: AgentDeps, actor: Actor, input: CreateAgentInput): Promise<AgentResponse> {
  requireAllowedEndpoint(input.endpoint_url, deps.config);
  const agent = await deps.db.$transaction(async (tx) => {
    const project = await findProject(tx, actor, input.project_id, 'share');
    const agent = await tx.agent.create({
      data: {
        tenantId: actor.tenantId,
        name: input.name,
        description: input.description ?? null,
        protocol: input.protocol,
        endpointUrl: input.endpoint_url,
        capabilities: (input.capabilities ?? undefined) as Prisma.InputJsonValue | undefined,
        agentMetadata: (input.agent_metadata ?? undefined) as Prisma.InputJsonValue | undefined,
      },
    });
    await tx.agentRateLimit.create({
      data: { tenantId: actor.tenantId, agentId: agent.id, ...rateLimitData(defaultLimits(deps.config)) },
    });
    await tx.projectAgent.create({
      data: {
        tenantId: actor.tenantId,
        projectId: project.id,
        agentId: agent.id,
        liveAgentId: agent.id,
        role: input.role ?? null,
      },
    });
    return agent;
  });
  return toAgentResponse(agent, deps.config);
}

export async function listAgents(deps: AgentDeps, actor: Actor, page: ListOptions): Promise<{ agents: AgentResponse[] }> {
  const agents = await deps.db.agent.findMany({ where: liveIn(actor), ...oldestFirst(page) });
  return { agents: agents.map((agent) => toAgentResponse(agent, deps.config)) };
}

export async function getAgent(deps: AgentDeps, actor: Actor, agentId: string): Promise<AgentResponse> {
  return toAgentResponse(await findAgent(deps.db, actor, agentId), deps.config);
}

/** Changes the fields given, on the agent read under lock: one archived meanwhile is 404. */
export async function updateAgent(
  deps: AgentDeps,
  actor: Actor,
  agentId: string,
  input: UpdateAgentInput,
): Promise<AgentResponse> {
  if (input.endpoint_url) requireAllowedEndpoint(input.endpoint_url, deps.config);
  const agent = await deps.db.$transaction(async (tx) => {
    const agent = await findAgent(tx, actor, agentId, 'update');
    return tx.agent.update({
      where: { id: agent.id },
      data: {
        name: input.name ?? undefined,
        description: input.description,
        protocol: input.protocol ?? undefined,
        endpointUrl: input.endpoint_url ?? undefined,
        capabilities: input.capabilities === undefined ? undefined : jsonOrNull(input.capabilities),
        agentMetadata: input.agent_metadata === undefined ? undefined : jsonOrNull(input.agent_metadata),
        status: input.status ?? undefined,
      },
    });
  });
  return toAgentResponse(agent, deps.config);
}

/** Archives the agent and its project assignments; the lock makes an assignment made meanwhile wait, then find it gone. */
export function archiveAgent(db: Database, actor: Actor, agentId: string): Promise<void> {
  return db.$transaction(async (tx) => {
    const agent = await findAgent(tx, actor, agentId, 'update');
    const now = new Date();
    await tx.projectAgent.updateMany({
      where: { agentId: agent.id, archivedAt: null },
      data: { archivedAt: now, liveAgentId: null },
    });
    await tx.agent.update({ where: { id: agent.id }, data: { archivedAt: now } });
  });
}

export async function getRateLimits(db: Database, actor: Actor, agentId: string): Promise<RateLimitResponse> {
  const agent = await findAgent(db, actor, agentId);
  return toRateLimitResponse(
    await db.agentRateLimit.findUniqueOrThrow({ where: { agentId_tenantId: { agentId: agent.id, tenantId: agent.tenantId } } }),
  );
}

export function updateRateLimits(db: Database, actor: Actor, agentId: string, input: RateLimitInput): Promise<RateLimitResponse> {
  return db.$transaction(async (tx) => {
    const agent = await findAgent(tx, actor, agentId, 'share');
    const limits = {
      second: input.max_requests_per_second,
      minute: input.max_requests_per_minute,
      hour: input.max_requests_per_hour,
    };
    return toRateLimitResponse(
      await tx.agentRateLimit.update({
        where: { agentId_tenantId: { agentId: agent.id, tenantId: agent.tenantId } },
        data: rateLimitData(limits),
      }),
    );
  });
}

/** The live agent of the actor's tenant, or 404; with `lock`, held until the transaction `db` ends. */
export async function findAgent(db: Database | Transaction, actor: Actor, agentId: string, lock?: ParentLock): Promise<Agent> {
  if (lock) await lockLive(db, 'agents', actor, agentId, lock);
  const agent = await db.agent.findFirst({ where: { id: agentId, ...liveIn(actor) } });
  if (!agent) throw new NotFoundError('Agent not found');
  return agent;
}

/** Agents that are inactive are kept, and not routed to (409). */
export function requireActive(agent: Agent): void {
  if (agent.status !== 'active') throw new ConflictError('The agent is inactive: set its status to active to send it messages');
}

export function defaultLimits(config: Deps['config']): RateLimits {
  return {
    second: config.COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_SECOND,
    minute: config.COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_MINUTE,
    hour: config.COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_HOUR,
  };
}

function rateLimitData(limits: RateLimits) {
  return { maxRequestsPerSecond: limits.second, maxRequestsPerMinute: limits.minute, maxRequestsPerHour: limits.hour };
}
