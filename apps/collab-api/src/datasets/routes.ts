import { changeDeps, type Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { projectParams } from '../projects/schemas.js';
import { listQuery } from '../shared/schemas.js';
import { createDatasetBody, datasetList, datasetParams, datasetSchema, updateDatasetBody } from './schemas.js';
import { archiveDataset, createDataset, getDataset, listDatasets, listProjectDatasets, updateDataset } from './service.js';

const MIRRORED =
  'Answered once the warehouse has applied the change. If the warehouse refuses it, nothing changes and the answer is 502 with its reason. ' +
  'Changes of the same record run one after another; one that waits too long for the others answers 409.';

export function datasetRoutes(api: UserApi, deps: Deps): void {
  const changes = changeDeps(deps);
  api.route({
    method: 'post',
    path: '/api/v1/datasets',
    summary: "Create a dataset in a project of the caller's tenant",
    description: `${MIRRORED} 404 when the project is not one of the caller's tenant; 409 when the project has a dataset of that name.`,
    tags: ['datasets'],
    body: createDatasetBody,
    status: 201,
    response: datasetSchema,
    errors: [404, 409, 502],
    handler: ({ body, actor }) => createDataset(changes, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/datasets',
    summary: "List the datasets of the caller's tenant, oldest first",
    tags: ['datasets'],
    query: listQuery,
    response: datasetList,
    handler: ({ query, actor }) => listDatasets(deps.db, actor, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/projects/{project_id}/datasets',
    summary: 'List the datasets of a project, oldest first',
    description:
      "For the project's own tenant and the tenants invited to it: its datasets, and the datasets of other tenants shared into it by approved project-dataset requests, each with its owning tenant_id.",
    tags: ['datasets'],
    params: projectParams,
    query: listQuery,
    response: datasetList,
    errors: [404],
    handler: ({ params, query, actor }) => listProjectDatasets(deps.db, actor, params.project_id, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/datasets/{dataset_id}',
    summary: 'Get a dataset',
    tags: ['datasets'],
    params: datasetParams,
    response: datasetSchema,
    errors: [404],
    handler: ({ params, actor }) => getDataset(deps.db, actor, params.dataset_id),
  });
  api.route({
    method: 'patch',
    path: '/api/v1/datasets/{dataset_id}',
    summary: 'Update a dataset: rename, describe or move it, or set its share policy',
    description:
      `${MIRRORED} Its tables move with it. \`share_policy.allow_exports\` false stops other tenants exporting the results of ` +
      'their jobs that read it (exports and download URLs answer 403, whenever the job ran).',
    tags: ['datasets'],
    params: datasetParams,
    body: updateDatasetBody,
    response: datasetSchema,
    errors: [404, 409, 502],
    handler: ({ params, body, actor }) => updateDataset(changes, actor, params.dataset_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/datasets/{dataset_id}',
    summary: 'Delete a dataset (soft) with its tables',
    description: `${MIRRORED} The warehouse dataset and its tables are dropped; the records are archived.`,
    tags: ['datasets'],
    params: datasetParams,
    status: 204,
    errors: [404, 409, 502],
    handler: ({ params, actor }) => archiveDataset(changes, actor, params.dataset_id),
  });
}
