import path from 'node:path';
import { checkDrift, describeDrift } from '@repo/db/dev';

/** The app's schema.prisma is exactly what its migrations produce (TOOLCHAIN.md's drift check). */
export function describeSchemaDrift(options: { appRoot: string; migrationsDir: string }): void {
  describe('database schema', () => {
    it('is exactly what the migrations produce (no drift between schema.prisma and prisma/migrations)', async () => {
      const report = await checkDrift({
        schemaPath: path.join(options.appRoot, 'prisma', 'schema.prisma'),
        migrationsDir: options.migrationsDir,
      });
      expect(describeDrift(report)).toBe('schema.prisma and the migrations agree.');
    });
  });
}
