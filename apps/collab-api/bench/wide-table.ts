/**
 * Measures what a very wide table costs: `POST /api/v1/tables` with 10,000 columns (the most a
 * table may have), each with a description, and a `PATCH` widening a one-column table to 10,000
 * columns; and, while each runs, another tenant's one-column create, against its time alone. The
 * server runs as its own process on the default DuckDB warehouse.
 *
 *   pnpm --filter collab-api bench:wide-table [--rounds 5]
 *
 * Creates a scratch database on TEST_DATABASE_URL's server (default postgresql://postgres@127.0.0.1:5432)
 * and drops it afterwards. Prints a Markdown table (milliseconds).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createScratchDatabase } from '@repo/db/dev';
import { startService } from '@repo/testing';
import { mintLocalToken } from '../src/auth/index.js';
import { createDatabaseClient } from '../src/database.js';
import { appRoot, migrationsDir } from '../src/paths.js';
import { bootstrapTenant } from '../src/tenants/bootstrap.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const SECRET = 'collab-api-bench-secret-0123456789abcdef';
const COLUMNS = 10_000;

const wideSchema = Array.from({ length: COLUMNS }, (_, i) => ({
  name: `column_${String(i).padStart(5, '0')}`,
  type: i % 3 === 0 ? 'INT64' : 'STRING',
  description: `Column ${i} of the wide table`,
}));
const narrowSchema = [{ name: 'id', type: 'INT64' }];

const database = await createScratchDatabase({ label: 'collab_wide_bench', migrationsDir });
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'collab-wide-bench-'));
const db = createDatabaseClient(database.url, 2);
try {
  const subs = ['idp|wide', 'idp|other'];
  for (const [i, sub] of subs.entries()) {
    await bootstrapTenant(db, {
      tenantName: `Tenant ${i}`,
      adminEmail: `admin${i}@bench.test`,
      adminName: 'Admin',
      adminSub: sub,
    });
  }
  const [wide, other] = subs.map((sub) => mintLocalToken({ secret: SECRET, sub }));
  const service = await startService('src/server.ts', {
    cwd: appRoot,
    env: { DATABASE_URL: database.url, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', COLLAB_JWT_SECRET: SECRET },
    timeoutMs: 60_000,
    keepLogs: false,
  });
  try {
    const call = async (token: string, method: string, urlPath: string, body: unknown) => {
      const started = performance.now();
      const res = await fetch(`${service.url}/api/v1${urlPath}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { id: string };
      if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(json)}`);
      return { ms: performance.now() - started, id: json.id };
    };
    const datasetOf = async (token: string) => {
      const project = await call(token, 'POST', '/projects', { name: 'Bench' });
      return (await call(token, 'POST', '/datasets', { name: 'Bench', project_id: project.id })).id;
    };
    const [wideDataset, otherDataset] = [await datasetOf(wide!), await datasetOf(other!)];
    let n = 0;
    const create = (token: string, datasetId: string, schema: object[]) =>
      call(token, 'POST', '/tables', { name: `t${n++}`, schema, dataset_id: datasetId });
    const otherCreate = () => create(other!, otherDataset, narrowSchema);
    /** `work`, and another tenant's one-column create sent 20 ms after it starts. */
    const alongside = async (work: () => Promise<{ ms: number }>) => {
      const running = work();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [main, side] = await Promise.all([running, otherCreate()]);
      return [main.ms, side.ms];
    };

    // Warm-up: the first requests compile code paths.
    await create(wide!, wideDataset, narrowSchema);
    await otherCreate();

    const kb = Math.round(JSON.stringify(wideSchema).length / 1024);
    const measured = {
      alone: { label: 'one-column create of another tenant, alone', ms: [] as number[] },
      post: { label: `POST a table of ${COLUMNS} columns with descriptions (${kb} KB of schema)`, ms: [] as number[] },
      duringPost: { label: '… one-column create of another tenant meanwhile', ms: [] as number[] },
      patch: { label: `PATCH a one-column table to those ${COLUMNS} columns`, ms: [] as number[] },
      duringPatch: { label: '… one-column create of another tenant meanwhile', ms: [] as number[] },
    };
    for (let round = 0; round < rounds; round++) {
      measured.alone.ms.push((await otherCreate()).ms);
      const [post, duringPost] = await alongside(() => create(wide!, wideDataset, wideSchema));
      measured.post.ms.push(post!);
      measured.duringPost.ms.push(duringPost!);
      const narrow = await create(wide!, wideDataset, narrowSchema);
      const [patch, duringPatch] = await alongside(() => call(wide!, 'PATCH', `/tables/${narrow.id}`, { schema: wideSchema }));
      measured.patch.ms.push(patch!);
      measured.duringPatch.ms.push(duringPatch!);
    }

    const stats = (ms: number[]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      return { median: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! };
    };
    console.log(`\n${rounds} rounds, node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})\n`);
    console.log('| Request | median ms | max ms |');
    console.log('|---|---:|---:|');
    for (const { label, ms } of Object.values(measured)) {
      const { median, max } = stats(ms);
      console.log(`| ${label} | ${median.toFixed(0)} | ${max.toFixed(0)} |`);
    }
  } finally {
    await service.stop();
  }
} finally {
  await db.$disconnect();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}
