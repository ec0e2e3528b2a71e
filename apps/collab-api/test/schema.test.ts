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
