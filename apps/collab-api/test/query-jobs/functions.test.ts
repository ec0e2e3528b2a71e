/**
 * DuckDB's functions, as the sandbox has them, against the reviewed snapshot
 * (duckdb-functions.tsv beside this file: `name<TAB>type`, distinct, sorted) and the allowlist of
 * src/adapters/warehouse/query/functions.ts. An upgrade of @duckdb/node-api that adds, drops or
 * renames a function fails here until someone has reviewed it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ALLOWED_FUNCTIONS, ALLOWED_TABLE_FUNCTIONS, REFUSED_FUNCTIONS } from '../../src/adapters/warehouse/query/functions.js';
import { SANDBOX } from '../../src/adapters/warehouse/query/sandbox.js';

const SNAPSHOT = path.join(__dirname, 'duckdb-functions.tsv');
const REVIEW =
  'Review each added function: allow it in src/adapters/warehouse/query/functions.ts only when it computes its result ' +
  'from its arguments alone (else add it to REFUSED_FUNCTIONS there), then add and remove the listed lines in ' +
  'test/query-jobs/duckdb-functions.tsv.';

let functions: { name: string; type: string }[];

beforeAll(async () => {
  const instance = await DuckDBInstance.create(':memory:', SANDBOX);
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll('SELECT DISTINCT function_name, function_type FROM duckdb_functions()');
    functions = reader
      .getRows()
      .map(([name, type]) => ({ name: String(name), type: String(type) }))
      .sort((a, b) => (a.name === b.name ? (a.type < b.type ? -1 : 1) : a.name < b.name ? -1 : 1));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});

it('lists the functions of the reviewed snapshot, no more and no fewer', async () => {
  const current = functions.map(({ name, type }) => `${name}\t${type}`);
  const reviewed = (await readFile(SNAPSHOT, 'utf8')).split('\n').filter((line) => line !== '');
  const added = current.filter((line) => !reviewed.includes(line));
  const dropped = reviewed.filter((line) => !current.includes(line));
  if (added.length > 0 || dropped.length > 0) {
    throw new Error(
      `DuckDB's functions changed (an upgrade of @duckdb/node-api?). ${REVIEW}\nAdded:\n${added.join('\n')}\nDropped:\n${dropped.join('\n')}`,
    );
  }
  expect(current).toEqual(reviewed);
});

it('has every scalar, aggregate and macro either allowed or refused', () => {
  const refused = (name: string) =>
    REFUSED_FUNCTIONS.some((group) => group.names.includes(name) || group.prefixes.some((prefix) => name.startsWith(prefix)));
  const unreviewed = functions
    .filter(({ type }) => type === 'scalar' || type === 'aggregate' || type === 'macro')
    .map(({ name }) => name.toLowerCase())
    .filter((name) => !ALLOWED_FUNCTIONS.has(name) && !refused(name));
  if (unreviewed.length > 0) throw new Error(`Functions nobody reviewed: ${[...new Set(unreviewed)].join(', ')}. ${REVIEW}`);
  const both = [...ALLOWED_FUNCTIONS].filter(refused);
  expect(both).toEqual([]);
});

it('allows only functions DuckDB has (and `unnest`, which the binder handles itself)', () => {
  const known = new Set(functions.filter(({ type }) => type !== 'table').map(({ name }) => name.toLowerCase()));
  expect([...ALLOWED_FUNCTIONS].filter((name) => !known.has(name) && name !== 'unnest')).toEqual([]);
  const tables = new Set(functions.filter(({ type }) => type === 'table').map(({ name }) => name));
  expect([...ALLOWED_TABLE_FUNCTIONS].filter((name) => !tables.has(name))).toEqual([]);
});
