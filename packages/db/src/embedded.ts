import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
  stop(): Promise<void>;
}

export interface OpenedEmbeddedPostgres extends EmbeddedPostgres {
  /** Served by another process of this machine; `stop` leaves it running. */
  shared: boolean;
  /** The process that serves it. */
  ownerPid: number;
}

interface Owner {
  pid: number;
  /** Set once the owner serves the database. */
  url?: string;
}

// How long to wait for another process that is starting the database (PGlite takes seconds),
// and for one whose server stopped answering to remove its record (it is stopping, or its pid
// now belongs to another program).
const OWNER_START_TIMEOUT_MS = 60_000;
const OWNER_STOP_GRACE_MS = 5_000;
const POLL_MS = 100;
const MAX_CONNECTIONS = 10;

/**
 * The embedded database under `dataDir`, for every process of this machine that asks for it: the
 * first one starts it (see startEmbeddedPostgres) and records `{pid, url}` next to the folder;
 * the others (a CLI command while the service runs, a second `pnpm start`) connect to its server,
 * because two PGlite instances on one folder would silently overwrite each other's writes. A
 * record whose process is gone is taken over. (Two processes taking over the same stale record
 * at the same instant could both win; start processes one at a time after a crash.)
 */
export async function openEmbeddedPostgres(options: {
  dataDir: string;
  extensions?: EmbeddedExtension[];
}): Promise<OpenedEmbeddedPostgres> {
  const ownerFile = `${path.resolve(options.dataDir)}.owner.json`;
  await mkdir(path.dirname(ownerFile), { recursive: true });
  const startDeadline = Date.now() + OWNER_START_TIMEOUT_MS;
  let silentSince: number | undefined;
  for (;;) {
    if (await claim(ownerFile)) return startAsOwner(ownerFile, options);
    const owner = await readOwner(ownerFile);
    if (owner === undefined || !isAlive(owner.pid)) {
      // Gone meanwhile, or left by a process that died: nobody serves the folder.
      await rm(ownerFile, { force: true });
      continue;
    }
    if (owner.url) {
      if (await answers(owner.url)) {
        return {
          url: owner.url,
          shared: true,
          ownerPid: owner.pid,
          stop: async () => {},
        };
      }
      silentSince ??= Date.now();
      if (Date.now() - silentSince > OWNER_STOP_GRACE_MS) {
        await rm(ownerFile, { force: true });
        continue;
      }
    } else if (Date.now() > startDeadline) {
      throw new Error(
        `The embedded database in ${options.dataDir} is being started by process ${owner.pid}, which has not served it for ${OWNER_START_TIMEOUT_MS / 1000} s; stop that process`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** Records this process as the owner, atomically and only if there is none: true when it is now. */
async function claim(ownerFile: string): Promise<boolean> {
  const draft = `${ownerFile}.${process.pid}.tmp`;
  await writeFile(draft, JSON.stringify({ pid: process.pid } satisfies Owner));
  try {
    await link(draft, ownerFile);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(draft, { force: true });
  }
}

async function startAsOwner(
  ownerFile: string,
  options: { dataDir: string; extensions?: EmbeddedExtension[] },
): Promise<OpenedEmbeddedPostgres> {
  let started: EmbeddedPostgres;
  try {
    started = await startEmbeddedPostgres(options);
    const draft = `${ownerFile}.${process.pid}.tmp`;
    await writeFile(draft, JSON.stringify({ pid: process.pid, url: started.url } satisfies Owner));
    await rename(draft, ownerFile);
  } catch (error) {
    await rm(ownerFile, { force: true });
    throw error;
  }
  return {
    ...started,
    shared: false,
    ownerPid: process.pid,
    async stop() {
      await started.stop();
      await rm(ownerFile, { force: true });
    },
  };
}

async function readOwner(ownerFile: string): Promise<Owner | undefined> {
  try {
    const owner = JSON.parse(await readFile(ownerFile, 'utf8')) as Partial<Owner>;
    return typeof owner.pid === 'number' ? { pid: owner.pid, url: owner.url } : undefined;
  } catch {
    // Gone meanwhile, or not written by us: no owner.
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The owner's server accepts connections (its pid may be alive but reused by another program). */
function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), timeout: 1_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/**
 * Starts PGlite (Postgres compiled to WebAssembly) with its data under `dataDir`, behind a
 * Postgres wire-protocol server on 127.0.0.1, so the app, Prisma and pg-boss use it exactly
 * like a real server. For running without any database setup; not for production or replicas.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  extensions?: EmbeddedExtension[];
}): Promise<EmbeddedPostgres> {
  await mkdir(options.dataDir, { recursive: true });
  const extensions = Object.fromEntries((options.extensions ?? []).map((name) => [name, EXTENSIONS[name]]));
  const db = await PGlite.create(options.dataDir, { extensions });
  // Connections of every process that shares the database (see openEmbeddedPostgres); PGlite runs their statements one at a time.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: MAX_CONNECTIONS });
  await server.start();
  return {
    url: `postgresql://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
