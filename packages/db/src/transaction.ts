import type pg from 'pg';

/**
 * Runs `work` in a transaction on one of the pool's connections: committed when it resolves,
 * rolled back when it throws. For the statements a request runs often (as preparedQuery's, on the
 * client), at a fraction of what an ORM's interactive transaction costs the event loop.
 */
export async function pgTransaction<T>(db: { pool: pg.Pool }, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is dropped from the pool rather than reused.
    await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.release(broken);
  }
}
