import path from 'node:path';
import { checkDrift, describeDrift } from '@repo/db/dev';
import { appRoot, migrationsDir } from '../src/paths.js';
import { createTestContext, type TestContext } from './context.js';

describe('database schema', () => {
  it('is exactly what the migrations produce (no drift between schema.prisma and prisma/migrations)', async () => {
    const report = await checkDrift({ schemaPath: path.join(appRoot, 'prisma', 'schema.prisma'), migrationsDir });
    expect(describeDrift(report)).toBe('schema.prisma and the migrations agree.');
  });

  describe('through the generated client', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await createTestContext();
    });
    afterAll(() => ctx.close());

    it('stores tenants, unarchived until deleted', async () => {
      const tenant = await ctx.db.tenant.create({ data: { name: 'Acme' } });
      expect(tenant).toMatchObject({ name: 'Acme', archivedAt: null });
      expect(tenant.id).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});
