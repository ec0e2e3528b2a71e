import { z } from 'zod';
import { archivedAt, displayName, idParams, timestamp } from '../shared/schemas.js';

export const assignmentSchema = z
  .object({
    project_id: z.uuid(),
    agent_id: z.uuid(),
    role: z.string().nullable(),
    created_at: timestamp,
    archived_at: archivedAt,
  })
  .meta({ id: 'ProjectAgent' });

export type AssignmentResponse = z.input<typeof assignmentSchema>;

export const assignmentList = z.object({ agents: z.array(assignmentSchema) }).meta({ id: 'ProjectAgentList' });

export const projectParams = idParams('project_id');
export const assignmentParams = idParams('project_id', 'agent_id');

export const assignBody = z.strictObject({
  agent_id: z.uuid(),
  role: displayName().nullish().meta({ description: "The agent's role in the project" }),
});

export type AssignInput = z.output<typeof assignBody>;
