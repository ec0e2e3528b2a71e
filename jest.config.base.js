import path from 'node:path';

/**
 * Shared jest settings: TypeScript compiled by swc to CommonJS (the Prisma client is generated
 * with moduleFormat "cjs" for this), workspace packages resolved to their source.
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['@repo/source', 'node', 'require', 'default'] },
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/src/**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      {
        jsc: { target: 'es2023', parser: { syntax: 'typescript' } },
        module: { type: 'commonjs' },
      },
    ],
  },
  // Sources import siblings as `./x.js` (Node ESM); jest resolves the `.ts` file.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // Each API test file creates its own database; two workers use the machine's two cores.
  maxWorkers: 2,
  testTimeout: 30_000,
  reporters: ['default', path.join(import.meta.dirname, 'scripts/jest-durations.js')],
  // With --coverage (`pnpm check`, CI): V8's own counters (no instrumenting pass), one summary per package.
  coverageProvider: 'v8',
  coverageReporters: ['text-summary'],
  collectCoverageFrom: ['src/**/*.ts', '!src/generated/**', '!src/**/*.test.ts'],
};
