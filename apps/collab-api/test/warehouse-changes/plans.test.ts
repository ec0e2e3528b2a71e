/** The pure rules of warehouse changes: planning an update from the locked row, and the reconciliation decision. */
import type { Field } from '../../src/adapters/warehouse/index.js';
import { planDatasetUpdate } from '../../src/datasets/plan.js';
import type { Dataset, Table } from '../../src/generated/prisma/client.js';
import { planTableUpdate } from '../../src/tables/plan.js';
import { busyRecords, plannedRepairs } from '../../src/warehouse-changes/repairs.js';

const [P1, P2, D1, D2, D3, T1, T2, T3] = [
  '00000000-0000-7000-8000-0000000000a1',
  '00000000-0000-7000-8000-0000000000a2',
  '00000000-0000-7000-8000-0000000000d1',
  '00000000-0000-7000-8000-0000000000d2',
  '00000000-0000-7000-8000-0000000000d3',
  '00000000-0000-7000-8000-0000000000f1',
  '00000000-0000-7000-8000-0000000000f2',
  '00000000-0000-7000-8000-0000000000f3',
];

const field = (name: string, extra: Partial<Field> = {}): Field => ({
  name,
  type: 'STRING',
  mode: 'NULLABLE',
  private: false,
  ...extra,
});

function dataset(extra: Partial<Dataset> = {}): Dataset {
  return {
    id: D1,
    tenantId: P1,
    projectId: P1,
    name: 'Sales',
    liveName: 'sales',
    description: 'Orders',
    createdAt: new Date(0),
    archivedAt: null,
    allowExports: true,
    ...extra,
  };
}

function table(extra: Partial<Table> = {}): Table {
  return {
    id: T1,
    tenantId: P1,
    datasetId: D1,
    name: 'Orders',
    liveName: 'orders',
    schema: [field('a')] as unknown as Table['schema'],
    createdAt: new Date(0),
    archivedAt: null,
    analysisRule: null,
    ...extra,
  };
}

describe('planDatasetUpdate', () => {
  it('sends the warehouse the new name and description only, and keeps what it had to restore', () => {
    expect(planDatasetUpdate(dataset(), { name: 'Revenue', description: null })).toEqual({
      before: { name: 'Sales', description: 'Orders', projectId: P1, allowExports: true },
      after: { name: 'Revenue', description: null, projectId: P1, allowExports: true },
      plan: { op: 'update_dataset', datasetId: D1, metadata: { friendlyName: 'Revenue', description: null } },
      names: { freed: `${P1}/sales`, taken: `${P1}/revenue` },
    });
  });

  it('needs no warehouse change for a move to another project, which still frees the name in the first', () => {
    const update = planDatasetUpdate(dataset(), { project_id: P2 });
    expect(update.plan).toBeUndefined();
    expect(update.names).toEqual({ freed: `${P1}/sales`, taken: `${P2}/sales` });
  });

  it('frees no name for a change of case, and plans nothing for a PATCH that changes nothing', () => {
    expect(planDatasetUpdate(dataset(), { name: 'SALES' }).names).toBeUndefined();
    expect(planDatasetUpdate(dataset(), {})).toMatchObject({ plan: undefined, names: undefined });
  });
});

describe('planTableUpdate', () => {
  it('plans a schema change from the locked row, with the new name', () => {
    const update = planTableUpdate(table(), { name: 'Orders 2', schema: [field('a'), field('b')] });
    expect(update.plan).toEqual({
      op: 'update_table',
      table: { datasetId: D1, tableId: T1 },
      update: { friendlyName: 'Orders 2', schema: { from: [field('a')], to: [field('a'), field('b')] } },
    });
    expect(update.before).toEqual({ name: 'Orders', datasetId: D1, schema: [field('a')], analysisRule: null });
    expect(update.names).toEqual({ freed: `${D1}/orders`, taken: `${D1}/orders 2` });
  });

  it('plans a move as a new table in the other dataset with the columns it will have', () => {
    expect(planTableUpdate(table(), { dataset_id: D2, schema: [field('x')] }).plan).toEqual({
      op: 'move_table',
      from: { datasetId: D1, tableId: T1 },
      to: { datasetId: D2, tableId: T1 },
      fields: [field('x')],
      metadata: { friendlyName: 'Orders' },
    });
  });

  it('plans nothing when the columns and name stay', () => {
    expect(planTableUpdate(table(), { schema: [field('a')], name: null, dataset_id: null }).plan).toBeUndefined();
  });

  it('sets, keeps and removes an analysis rule in the records only, checking it against the columns it will have', () => {
    const rule = { type: 'aggregation' as const, privacy_unit: 'A', min_distinct: 3 };
    const set = planTableUpdate(table(), { analysis_rule: rule });
    expect(set.plan).toBeUndefined();
    // Spelt as the column is.
    expect(set.after.analysisRule).toEqual({ ...rule, privacy_unit: 'a' });
    const ruled = table({ analysisRule: { ...rule, privacy_unit: 'a' } });
    expect(planTableUpdate(ruled, { name: 'Other' }).after.analysisRule).toEqual({ ...rule, privacy_unit: 'a' });
    expect(planTableUpdate(ruled, { analysis_rule: null }).after.analysisRule).toBeNull();
    const refused = (update: () => unknown) => {
      try {
        update();
        return 'planned';
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`;
      }
    };
    expect(refused(() => planTableUpdate(table(), { analysis_rule: { ...rule, privacy_unit: 'zz' } }))).toMatch(
      /^ValidationError: .*privacy_unit "zz" is not a column of the table/,
    );
    expect(
      refused(() =>
        planTableUpdate(table({ schema: [field('a', { private: true })] as unknown as Table['schema'] }), {
          analysis_rule: rule,
        }),
      ),
    ).toMatch(/^ValidationError: .*is a private column/);
    expect(refused(() => planTableUpdate(table(), { analysis_rule: rule, schema: [field('a', { mode: 'REPEATED' })] }))).toMatch(
      /^ValidationError: .*is REPEATED/,
    );
    // A column change the kept rule no longer fits.
    expect(refused(() => planTableUpdate(ruled, { schema: [field('b')] }))).toMatch(
      /^ConflictError: The table's analysis rule no longer fits these columns: privacy_unit "a" is not a column/,
    );
    expect(refused(() => planTableUpdate(ruled, { schema: [field('b')], analysis_rule: null }))).toBe('planned');
  });
});

describe('plannedRepairs', () => {
  it('drops what no live record has, makes what live records miss, datasets before tables', () => {
    const warehouse = [
      { datasetId: D1, tableIds: [T1, T2] },
      { datasetId: D3, tableIds: [T3] },
    ];
    const records = {
      datasets: [{ id: D1 }, { id: D2 }],
      tables: [
        { id: T1, datasetId: D1 },
        { id: T3, datasetId: D2 },
      ],
    };
    expect(plannedRepairs(warehouse, records, new Set())).toEqual([
      { op: 'drop_table', table: { datasetId: D1, tableId: T2 } },
      { op: 'drop_dataset', datasetId: D3 },
      { op: 'make_dataset', datasetId: D2 },
      { op: 'make_table', table: { datasetId: D2, tableId: T3 } },
    ]);
  });

  it('leaves alone what a change under way concerns: its record and the parents it relies on', () => {
    const warehouse = [{ datasetId: D3, tableIds: [] }];
    const records = { datasets: [{ id: D1 }], tables: [{ id: T1, datasetId: D1 }] };
    const busy = busyRecords([
      { recordId: D3, involves: [] },
      { recordId: T2, involves: [D1] },
    ]);
    expect(plannedRepairs(warehouse, records, busy)).toEqual([]);
  });

  it('drops a table left in the dataset a live table moved out of', () => {
    const warehouse = [
      { datasetId: D1, tableIds: [T1] },
      { datasetId: D2, tableIds: [T1] },
    ];
    const records = { datasets: [{ id: D1 }, { id: D2 }], tables: [{ id: T1, datasetId: D2 }] };
    expect(plannedRepairs(warehouse, records, new Set())).toEqual([{ op: 'drop_table', table: { datasetId: D1, tableId: T1 } }]);
  });

  it('needs nothing when they agree', () => {
    const records = { datasets: [{ id: D1 }], tables: [{ id: T1, datasetId: D1 }] };
    expect(plannedRepairs([{ datasetId: D1, tableIds: [T1] }], records, new Set())).toEqual([]);
  });
});
