import type { Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import { createProjectBody, projectList, projectParams, projectSchema, updateProjectBody } from './schemas.js';
import { archiveProject, createProject, getProject, listProjects, updateProject } from './service.js';

export function projectRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/projects',
    summary: "Create a project in the caller's tenant",
    tags: ['projects'],
    body: createProjectBody,
    status: 201,
    response: projectSchema,
    handler: ({ body, actor }) => createProject(deps.db, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/projects',
    summary: "List the projects of the caller's tenant and those it was invited to, oldest first",
    tags: ['projects'],
    query: listQuery,
    response: projectList,
    handler: ({ query, actor }) => listProjects(deps.db, actor, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/projects/{project_id}',
    summary: 'Get a project',
    description: "A project of the caller's tenant, or one it was invited to by an approved project-tenant request.",
    tags: ['projects'],
    params: projectParams,
    response: projectSchema,
    errors: [404],
    handler: ({ params, actor }) => getProject(deps.db, actor, params.project_id),
  });
  api.route({
    method: 'patch',
    path: '/api/v1/projects/{project_id}',
    summary: 'Update a project',
    description: "The project's own tenant only: 403 for a tenant invited to it.",
    tags: ['projects'],
    params: projectParams,
    body: updateProjectBody,
    response: projectSchema,
    errors: [403, 404],
    handler: ({ params, body, actor }) => updateProject(deps.db, actor, params.project_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/projects/{project_id}',
    summary: 'Delete a project (soft)',
    description:
      "The project's own tenant only (403 for a tenant invited to it). Refused (409) while the project has datasets or agents: delete or remove them first. Waits for the warehouse changes of its datasets under way.",
    tags: ['projects'],
    params: projectParams,
    status: 204,
    errors: [403, 404, 409],
    handler: ({ params, actor }) => archiveProject(deps.db, actor, params.project_id),
  });
}
