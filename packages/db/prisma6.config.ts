/**
 * Configuration for the Prisma 6 CLI, used only to compute migration SQL (`migrate diff`
 * between two datamodels). Prisma 7's CLI needs a native schema engine that cannot be
 * downloaded offline; Prisma 6 runs a WebAssembly one with these settings. See src/dev/prisma-diff.ts.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import { defineConfig } from 'prisma6/config';

export default defineConfig({
  engine: 'js',
  experimental: { adapter: true },
  // The CLI opens this connection even to diff two datamodels, but changes nothing in it.
  adapter: () => Promise.resolve(new PrismaPg({ connectionString: process.env.PRISMA_DIFF_DATABASE_URL, allowExitOnIdle: true })),
});
