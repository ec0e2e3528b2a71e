import { createScratchDatabase } from '../src/dev/index.js';
import { isUniqueViolation, violatedUniqueIndex, withClient } from '../src/index.js';

// As adapter-pg 7.10 reports them (seen on Postgres 15), and as Prisma's own engine does.
const adapterError = (table: string, index: string) => ({
  code: 'P2002',
  meta: {
    modelName: 'X',
    driverAdapterError: {
      name: 'DriverAdapterError',
      cause: { originalCode: '23505', kind: 'UniqueConstraintViolation', constraint: { index }, table },
    },
  },
});

describe('isUniqueViolation', () => {
  const liveName = adapterError('tables', 'tables_dataset_id_live_name_key');

  it('knows any unique violation without columns, and nothing else', () => {
    expect(isUniqueViolation(liveName)).toBe(true);
    expect(isUniqueViolation({ code: 'P2025' })).toBe(false);
    expect(isUniqueViolation(new Error('duplicate key'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });

  it("matches the constraint's columns exactly, never a part of them", () => {
    expect(isUniqueViolation(liveName, ['dataset_id', 'live_name'])).toBe(true);
    expect(isUniqueViolation(liveName, ['live_name'])).toBe(false);
    expect(isUniqueViolation(liveName, ['name'])).toBe(false);
    expect(isUniqueViolation(liveName, ['live_name', 'dataset_id'])).toBe(false);
    expect(isUniqueViolation(adapterError('users', 'users_identity_provider_id_key'), ['identity_provider_id'])).toBe(true);
    expect(isUniqueViolation(adapterError('users', 'users_pkey'), ['id'])).toBe(false);
  });

  it("knows the violation of a raw query (P2010 with the adapter's cause), and no other raw query failure", () => {
    const raw = { ...adapterError('messages', 'messages_inbox_id_direction_provider_message_id_key'), code: 'P2010' };
    expect(isUniqueViolation(raw)).toBe(true);
    expect(isUniqueViolation(raw, ['inbox_id', 'direction', 'provider_message_id'])).toBe(true);
    expect(isUniqueViolation(raw, ['provider_message_id'])).toBe(false);
    const syntax = { code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: '42601', kind: 'postgres' } } } };
    expect(isUniqueViolation(syntax)).toBe(false);
  });

  it('names the violated index, a primary key too, and none for other errors', () => {
    expect(violatedUniqueIndex({ ...adapterError('webhook_tokens', 'webhook_tokens_pkey'), code: 'P2010' })).toBe(
      'webhook_tokens_pkey',
    );
    expect(violatedUniqueIndex(liveName)).toBe('tables_dataset_id_live_name_key');
    expect(violatedUniqueIndex({ code: '23505', table: 'webhook_tokens', constraint: 'webhook_tokens_pkey' })).toBe(
      'webhook_tokens_pkey',
    );
    expect(violatedUniqueIndex({ code: '23503', constraint: 'webhook_tokens_pkey' })).toBeUndefined();
    expect(violatedUniqueIndex(new Error('duplicate key'))).toBeUndefined();
  });

  it('reads the columns when the driver or the engine lists them', () => {
    const listed = { code: 'P2002', meta: { driverAdapterError: { cause: { constraint: { fields: ['a', 'b'] } } } } };
    expect(isUniqueViolation(listed, ['a', 'b'])).toBe(true);
    expect(isUniqueViolation(listed, ['b'])).toBe(false);
    const engine = { code: 'P2002', meta: { target: ['tenant_id', 'live_email'] } };
    expect(isUniqueViolation(engine, ['tenant_id', 'live_email'])).toBe(true);
    expect(isUniqueViolation(engine, ['live_email'])).toBe(false);
  });

  it("knows node-postgres's own error, from a statement run on pg directly, by the violated index", async () => {
    const database = await createScratchDatabase({ label: 'unique_violation_test' });
    try {
      const error = await withClient(database.url, async (client) => {
        await client.query(
          'CREATE TABLE messages (inbox_id int, direction text, provider_message_id text, UNIQUE (inbox_id, direction, provider_message_id))',
        );
        await client.query(`INSERT INTO messages VALUES (1, 'inbound', 'a')`);
        return client.query(`INSERT INTO messages VALUES (1, 'inbound', 'a')`).then(
          () => undefined,
          (failure: unknown) => failure,
        );
      });
      expect(isUniqueViolation(error)).toBe(true);
      expect(isUniqueViolation(error, ['inbox_id', 'direction', 'provider_message_id'])).toBe(true);
      expect(isUniqueViolation(error, ['provider_message_id'])).toBe(false);
      expect(isUniqueViolation({ code: '23503', table: 'messages', constraint: 'messages_inbox_id_fkey' })).toBe(false);
    } finally {
      await database.drop();
    }
  });
});
