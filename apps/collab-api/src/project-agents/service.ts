import { ConflictError, NotFoundError } from '@repo/errors';
import { type Actor, liveIn } from '../access/index.js';
import { findAgent } from '../agents/service.js';
import type { Database } from '../database.js';
import type { ProjectAgent } from '../generated/prisma/client.js';
import { findProject } from '../projects/service.js';
import { conflictOnDuplicate } from '../shared/conflicts.js';
import { iso, isoOrNull, oldestFirst, type ListOptions } from '../shared/schemas.js';
import type { AssignInput, AssignmentResponse } from './schemas.js';

function toAssignmentResponse(assignment: ProjectAgent): AssignmentResponse {
  return {
    project_id: assignment.projectId,
    agent_id: assignment.agentId,
    role: assignment.role,
    created_at: iso(assignment.createdAt),
    archived_at: isoOrNull(assignment.archivedAt),
  };
}

/**
 * Assigns a live agent to a live project, both of the actor's tenant (404 otherwise), holding
 * both until the assignment is made, so that neither is archived meanwhile. Once per pair (409).
 */
export function assignAgent(db: Database, actor: Actor, projectId: string, input: AssignInput): Promise<AssignmentResponse> {
  return db.$transaction(async (tx) => {
    const project = await findProject(tx, actor, projectId, 'share');
    const agent = await findAgent(tx, actor, input.agent_id, 'share');
    const assignment = await conflictOnDuplicate(
      tx.projectAgent.create({
        data: {
          tenantId: actor.tenantId,
          projectId: project.id,
          agentId: agent.id,
          liveAgentId: agent.id,
          role: input.role ?? null,
        },
      }),
      ['project_id', 'live_agent_id'],
      'The agent is already assigned to this project',
    );
    return toAssignmentResponse(assignment);
  });
}

export async function listProjectAgents(
  db: Database,
  actor: Actor,
  projectId: string,
  page: ListOptions,
): Promise<{ agents: AssignmentResponse[] }> {
  const project = await findProject(db, actor, projectId);
  const assignments = await db.projectAgent.findMany({
    where: { projectId: project.id, ...liveIn(actor) },
    ...oldestFirst(page),
  });
  return { agents: assignments.map(toAssignmentResponse) };
}

/**
 * Removes (archives) the agent's assignment to the project (404 when there is none). An agent
 * keeps at least one project (409): the agent's row is locked, so that two removals at once
 * cannot each leave the other's as the last.
 */
export function removeAgent(db: Database, actor: Actor, projectId: string, agentId: string): Promise<void> {
  return db.$transaction(async (tx) => {
    const project = await findProject(tx, actor, projectId);
    const agent = await findAgent(tx, actor, agentId, 'update');
    const assignments = await tx.projectAgent.findMany({ where: { agentId: agent.id, ...liveIn(actor) } });
    const assignment = assignments.find((entry) => entry.projectId === project.id);
    if (!assignment) throw new NotFoundError('The agent is not assigned to this project');
    if (assignments.length === 1) {
      throw new ConflictError('An agent keeps at least one project: assign it to another project first, or delete the agent');
    }
    await tx.projectAgent.update({ where: { id: assignment.id }, data: { archivedAt: new Date(), liveAgentId: null } });
  });
}
