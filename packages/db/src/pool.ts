import pg from 'pg';

export interface PoolOptions {
  /**
   * Every connection is the same server session (the embedded database: PGlite serves one
   * session to all its connections). Statements then run unnamed: a name prepared by one
   * connection would exist for the next one too, which pg does not know, and Postgres refuses to
   * prepare it again (42P05), on every run until a restart: after the pool closed an idle
   * connection, or from a second process on the same database.
   */
  sharedSession?: boolean;
}

/**
 * A pg pool of at most `max` connections to `url`. An idle connection the server ends (a restart,
 * a failover, a database dropped WITH (FORCE)) is dropped from the pool and the next query opens
 * another; without this listener the pool's 'error' would be unhandled and end the process
 * (Prisma's adapter listens only from its first query, and the pool may be used before that).
 */
export function createPool(url: string, max: number, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, ...(options.sharedSession && { Client: UnnamedStatementsClient }) });
  pool.on('error', () => {});
  return pool;
}

/** A client that runs every statement unnamed (parsed each time), for a session its connections share. */
class UnnamedStatementsClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [config] = args;
    if (typeof config === 'object' && config !== null && 'name' in config) args[0] = { ...config, name: undefined };
    return (super.query as (...rest: unknown[]) => never)(...args);
  }
}
