import { idOfPhysicalName, physicalNames, withoutPhysicalNames } from '../../src/adapters/warehouse/names.js';

describe('physicalNames', () => {
  const datasetId = '3F2A9C1E-7B4D-4E2A-9F00-1234567890AB';
  const tableId = 'b1c2d3e4-0000-4000-8000-00000000000f';

  it('derives the dataset name from its id only', () => {
    expect(physicalNames({ datasetId })).toEqual({ dataset: 'ds_3f2a9c1e_7b4d_4e2a_9f00_1234567890ab' });
  });

  it('derives the table name from its id, next to its dataset name', () => {
    expect(physicalNames({ datasetId, tableId })).toEqual({
      dataset: 'ds_3f2a9c1e_7b4d_4e2a_9f00_1234567890ab',
      table: 't_b1c2d3e4_0000_4000_8000_00000000000f',
    });
  });

  it.each(['', 'sales', 'x"; DROP SCHEMA main; --', '3f2a9c1e-7b4d-4e2a-9f00-1234567890ab '])('refuses %j as an id', (id) => {
    expect(() => physicalNames({ datasetId: id })).toThrow(TypeError);
    expect(() => physicalNames({ datasetId, tableId: id })).toThrow(TypeError);
  });
});

describe('idOfPhysicalName', () => {
  it('gives back the id a name was made from', () => {
    const datasetId = '3f2a9c1e-7b4d-4e2a-9f00-1234567890ab';
    const tableId = 'b1c2d3e4-0000-4000-8000-00000000000f';
    const names = physicalNames({ datasetId, tableId });
    expect(idOfPhysicalName('dataset', names.dataset)).toBe(datasetId);
    expect(idOfPhysicalName('table', names.table)).toBe(tableId);
  });

  it.each([
    ['dataset', 'main'],
    ['dataset', 't_3f2a9c1e_7b4d_4e2a_9f00_1234567890ab'],
    ['dataset', 'ds_3f2a9c1e_7b4d_4e2a_9f00_1234567890ab_old'],
    ['table', 'ds_3f2a9c1e_7b4d_4e2a_9f00_1234567890ab'],
    ['table', 't_3F2A9C1E_7B4D_4E2A_9F00_1234567890AB'],
  ] as const)('finds no id in a %s named %j (not one of ours)', (kind, name) => {
    expect(idOfPhysicalName(kind, name)).toBeUndefined();
  });
});

describe('withoutPhysicalNames', () => {
  const ds = 'ds_3f2a9c1e_7b4d_4e2a_9f00_1234567890ab';
  const t = 't_b1c2d3e4_0000_4000_8000_00000000000f';

  it.each([
    [`Not found: Dataset my-project:${ds}`, 'Not found: Dataset <dataset>'],
    [`Not found: Table my-project:${ds}.${t}`, 'Not found: Table <table>'],
    [`Catalog Error: Schema with name "${ds}" already exists!`, 'Catalog Error: Schema with name "<dataset>" already exists!'],
    [
      `Catalog Error: Table with name ${t} does not exist! Did you mean "${ds}.${t}"?`,
      'Catalog Error: Table with name <table> does not exist! Did you mean "<table>"?',
    ],
    ['Access Denied: Permission bigquery.datasets.update denied', 'Access Denied: Permission bigquery.datasets.update denied'],
  ])('puts %j as %j', (text, expected) => {
    expect(withoutPhysicalNames(text)).toBe(expected);
  });
});
