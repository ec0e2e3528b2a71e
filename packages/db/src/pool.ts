import pg from 'pg';

/**
 * A pg pool of at most `max` connections to `url`. An idle connection the server ends (a restart,
 * a failover, a database dropped WITH (FORCE)) is dropped from the pool and the next query opens
 * another; without this listener the pool's 'error' would be unhandled and end the process
 * (Prisma's adapter listens only from its first query, and the pool may be used before that).
 */
export function createPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool;
}
