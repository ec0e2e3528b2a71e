import { changeDeps, type Deps } from '../deps.js';
import type { UserApi } from '../shared/api.js';
import { datasetParams } from '../datasets/schemas.js';
import { listQuery } from '../shared/schemas.js';
import { createTableBody, tableList, tableParams, tableSchema, updateTableBody } from './schemas.js';
import { archiveTable, createTable, getTable, listDatasetTables, listTables, updateTable } from './service.js';

const MIRRORED =
  'Answered once the warehouse has applied the change. If the warehouse refuses it, nothing changes and the answer is 502 with its reason. ' +
  'Changes of the same record run one after another; one that waits too long for the others answers 409.';

export function tableRoutes(api: UserApi, deps: Deps): void {
  const changes = changeDeps(deps);
  api.route({
    method: 'post',
    path: '/api/v1/tables',
    summary: "Create a table in a dataset of the caller's tenant",
    description: `${MIRRORED} 404 when the dataset is not one of the caller's tenant; 409 when the dataset has a table of that name.`,
    tags: ['tables'],
    body: createTableBody,
    status: 201,
    response: tableSchema,
    errors: [404, 409, 502],
    handler: ({ body, actor }) => createTable(changes, actor, body),
  });
  api.route({
    method: 'get',
    path: '/api/v1/tables',
    summary: "List the tables of the caller's tenant, oldest first",
    tags: ['tables'],
    query: listQuery,
    response: tableList,
    handler: ({ query, actor }) => listTables(deps.db, actor, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/datasets/{dataset_id}/tables',
    summary: 'List the tables of a dataset, oldest first',
    description:
      "A dataset of the caller's tenant, or one another tenant shared into a project the caller's tenant owns or was invited to: " +
      'its columns (names, types, modes, private flags) and analysis rules, never its data. 404 otherwise.',
    tags: ['tables'],
    params: datasetParams,
    query: listQuery,
    response: tableList,
    errors: [404],
    handler: ({ params, query, actor }) => listDatasetTables(deps.db, actor, params.dataset_id, query),
  });
  api.route({
    method: 'get',
    path: '/api/v1/tables/{table_id}',
    summary: 'Get a table',
    description:
      "A table of the caller's tenant, or of another tenant's dataset shared into a project the caller's tenant reaches (its schema and " +
      'analysis rule only). 404 otherwise.',
    tags: ['tables'],
    params: tableParams,
    response: tableSchema,
    errors: [404],
    handler: ({ params, actor }) => getTable(deps.db, actor, params.table_id),
  });
  api.route({
    method: 'patch',
    path: '/api/v1/tables/{table_id}',
    summary: 'Update a table: rename it, change its columns, move it to another dataset, or set its analysis rule',
    description:
      `${MIRRORED} A change the table's rows cannot take answers 409 and says why. ` +
      "`analysis_rule` (the records only) binds other tenants' queries over the table: they must aggregate, and groups with fewer " +
      'than `min_distinct` distinct values of `privacy_unit` are dropped; a job applies the rule it started with. A table of another ' +
      'tenant is a 404, whether it was shared with the caller or not; a schema change that the rule would no longer fit is a 409.',
    tags: ['tables'],
    params: tableParams,
    body: updateTableBody,
    response: tableSchema,
    errors: [404, 409, 502],
    handler: ({ params, body, actor }) => updateTable(changes, actor, params.table_id, body),
  });
  api.route({
    method: 'delete',
    path: '/api/v1/tables/{table_id}',
    summary: 'Delete a table (soft)',
    description: `${MIRRORED} The warehouse table is dropped; the record and its import and export jobs are archived.`,
    tags: ['tables'],
    params: tableParams,
    status: 204,
    errors: [404, 409, 502],
    handler: ({ params, actor }) => archiveTable(changes, actor, params.table_id),
  });
}
