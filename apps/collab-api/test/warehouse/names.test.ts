import { physicalNames } from '../../src/adapters/warehouse/names.js';

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
