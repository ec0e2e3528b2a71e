import { applyMigrations, readMigrations, withClient } from '@repo/db';
import { createScratchDatabase } from '@repo/db/dev';
import { describeSchemaDrift } from '@repo/testing';
import { appRoot, migrationsDir } from '../src/paths.js';
import { createTestContext, type TestContext } from './context.js';

describeSchemaDrift({ appRoot, migrationsDir });

describe('database constraints', () => {
  describe('through the generated client', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await createTestContext();
    });
    afterAll(() => ctx.close());

    it('refuses a dataset, table or job whose parent belongs to another tenant', async () => {
      const [a, b] = [await ctx.db.tenant.create({ data: { name: 'A' } }), await ctx.db.tenant.create({ data: { name: 'B' } })];
      const project = await ctx.db.project.create({ data: { tenantId: b.id, name: 'B project' } });
      await expect(ctx.db.dataset.create({ data: { tenantId: a.id, projectId: project.id, name: 'x' } })).rejects.toMatchObject({
        code: 'P2003',
      });
      const dataset = await ctx.db.dataset.create({ data: { tenantId: b.id, projectId: project.id, name: 'x' } });
      await expect(
        ctx.db.table.create({ data: { tenantId: a.id, datasetId: dataset.id, name: 't', schema: [] } }),
      ).rejects.toMatchObject({
        code: 'P2003',
      });
      const table = await ctx.db.table.create({ data: { tenantId: b.id, datasetId: dataset.id, name: 't', schema: [] } });
      await expect(
        ctx.db.tableJob.create({ data: { tenantId: a.id, tableId: table.id, kind: 'import', status: 'x' } }),
      ).rejects.toMatchObject({
        code: 'P2003',
      });
    });

    it('keeps live names unique per parent, and lets archived records keep theirs', async () => {
      const tenant = await ctx.db.tenant.create({ data: { name: 'T' } });
      const project = await ctx.db.project.create({ data: { tenantId: tenant.id, name: 'P' } });
      const data = { tenantId: tenant.id, projectId: project.id, name: 'Sales', liveName: 'sales' };
      const first = await ctx.db.dataset.create({ data });
      await expect(ctx.db.dataset.create({ data })).rejects.toMatchObject({ code: 'P2002' });
      await ctx.db.dataset.update({ where: { id: first.id }, data: { archivedAt: new Date(), liveName: null } });
      await ctx.db.dataset.create({ data });
      await ctx.db.dataset.create({ data: { ...data, liveName: null, archivedAt: new Date() } });
    });
  });
});

describe('migration warehouse_outbox', () => {
  it('frees the names that archived datasets and tables still held', async () => {
    const migrations = await readMigrations(migrationsDir);
    const index = migrations.findIndex((migration) => migration.name.endsWith('_warehouse_outbox'));
    const database = await createScratchDatabase({ label: 'collab_outbox_migration' });
    try {
      await withClient(database.url, async (client) => {
        await applyMigrations(client, migrations.slice(0, index));
        await client.query(`
          INSERT INTO tenants (id, name) VALUES ('00000000-0000-7000-8000-000000000001', 'T');
          INSERT INTO projects (id, tenant_id, name) VALUES ('00000000-0000-7000-8000-000000000002', '00000000-0000-7000-8000-000000000001', 'P');
          INSERT INTO datasets (id, tenant_id, project_id, name, live_name, archived_at) VALUES
            ('00000000-0000-7000-8000-000000000003', '00000000-0000-7000-8000-000000000001', '00000000-0000-7000-8000-000000000002', 'Held', 'held', now()),
            ('00000000-0000-7000-8000-000000000004', '00000000-0000-7000-8000-000000000001', '00000000-0000-7000-8000-000000000002', 'Live', 'live', NULL);
          INSERT INTO tables (id, tenant_id, dataset_id, name, schema, live_name, archived_at) VALUES
            ('00000000-0000-7000-8000-000000000005', '00000000-0000-7000-8000-000000000001', '00000000-0000-7000-8000-000000000004', 'Held', '[]', 'held', now())`);
        await applyMigrations(client, migrations);
        const { rows } = await client.query<{ name: string; live_name: string | null }>(
          'SELECT name, live_name FROM datasets UNION ALL SELECT name, live_name FROM tables ORDER BY name',
        );
        expect(rows).toEqual([
          { name: 'Held', live_name: null },
          { name: 'Held', live_name: null },
          { name: 'Live', live_name: 'live' },
        ]);
      });
    } finally {
      await database.drop();
    }
  });
});
