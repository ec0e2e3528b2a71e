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

    it('stores inboxes with time-ordered ids and unique addresses', async () => {
      const first = await ctx.db.inbox.create({ data: { name: 'Support', emailAddress: 'support@inbox.localhost' } });
      expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
      expect(first.createdAt).toBeInstanceOf(Date);
      await expect(
        ctx.db.inbox.create({ data: { name: 'Other', emailAddress: 'support@inbox.localhost' } }),
      ).rejects.toMatchObject({
        code: 'P2002',
      });
    });
  });
});
