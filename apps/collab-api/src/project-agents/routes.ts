import { requireOrgAdmin } from '../access/index.js';
import type { Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { listQuery } from '../shared/schemas.js';
import { assignBody, assignmentList, assignmentParams, assignmentSchema, projectParams } from './schemas.js';
import { assignAgent, listProjectAgents, removeAgent } from './service.js';

export function projectAgentRoutes(api: UserApi, deps: Deps): void {
  api.route({
    method: 'post',
    path: '/api/v1/projects/{project_id}/agents',
    summary: 'Assign an agent to a project',
    description: 'Org admins only (403 otherwise). An agent is assigned to a project once at a time (409).',
    tags: ['agents'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: projectParams,
    body: assignBody,
    status: 201,
    response: assignmentSchema,
    errors: [403, 404, 409],
    handler: ({ params, body, actor }) => assignAgent(deps.db, actor, params.project_id, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/projects/{project_id}/agents',
    summary: "List a project's agent assignments, oldest first",
    tags: ['agents'],
    params: projectParams,
    query: listQuery,
    response: assignmentList,
    errors: [404],
    handler: ({ params, query, actor }) => listProjectAgents(deps.db, actor, params.project_id, query),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/projects/{project_id}/agents/{agent_id}',
    summary: 'Remove an agent from a project',
    description:
      'Org admins only (403 otherwise). An agent keeps at least one project (409): assign it elsewhere first, or delete the agent.',
    tags: ['agents'],
    authorize: ({ actor }) => requireOrgAdmin(actor),
    params: assignmentParams,
    status: 204,
    errors: [403, 404, 409],
    handler: ({ params, actor }) => removeAgent(deps.db, actor, params.project_id, params.agent_id),
  });
}
