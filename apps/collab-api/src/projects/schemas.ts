import { z } from 'zod';
import { archivedAt, description, displayName, idParams, timestamp } from '../shared/schemas.js';

export const projectSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    created_at: timestamp,
    archived_at: archivedAt,
  })
  .meta({ id: 'Project' });

export type ProjectResponse = z.input<typeof projectSchema>;

export const projectList = z.object({ projects: z.array(projectSchema) }).meta({ id: 'ProjectList' });

export const projectParams = idParams('project_id');

export const createProjectBody = z.strictObject({
  name: displayName(),
  description: description.nullish(),
});

export const updateProjectBody = z.strictObject({
  name: displayName().nullish().meta({ description: 'Absent or null keeps the current name' }),
  description: description.nullish().meta({ description: 'Absent keeps the current description; null or "" removes it' }),
});

export type UpdateProjectInput = z.output<typeof updateProjectBody>;
