import { mkdir } from 'node:fs/promises';
import { PGlite, type Extensions } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** Extensions an app may ask the embedded database for (each must be bundled with PGlite). */
const EXTENSIONS = { btree_gin, pg_trgm } satisfies Extensions;
export type EmbeddedExtension = keyof typeof EXTENSIONS;

export interface EmbeddedPostgres {
  /** Connection string of the local wire-protocol server in front of the embedded database. */
  url: string;
  /** Pool size that clients must stay within: PGlite is one session, shared by all connections. */
  maxConnections: number;
  stop(): Promise<void>;
}

/**
 * Starts PGlite (Postgres compiled to WebAssembly) with its data under `dataDir`, behind a
 * Postgres wire-protocol server on 127.0.0.1, so the app, Prisma and pg-boss use it exactly
 * like a real server. For running without any database setup; not for production or replicas.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  extensions?: EmbeddedExtension[];
  maxConnections?: number;
}): Promise<EmbeddedPostgres> {
  await mkdir(options.dataDir, { recursive: true });
  const extensions = Object.fromEntries((options.extensions ?? []).map((name) => [name, EXTENSIONS[name]]));
  const db = await PGlite.create(options.dataDir, { extensions });
  const maxConnections = options.maxConnections ?? 10;
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  return {
    url: `postgresql://postgres@${server.getServerConn()}/postgres`,
    maxConnections,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
