/**
 * Remembered checks (check-cache.ts) over the real sandbox: the same text against the same
 * catalog and options is checked once; any change of the catalog (a column made private, another
 * table), of the options or of the text is checked anew; refusals, long texts and large checks
 * are not kept, and the oldest check goes first.
 */
import type { ReadableCatalog } from '../../src/adapters/warehouse/query/analyze.js';
import { checkKey, rememberingChecks } from '../../src/adapters/warehouse/query/check-cache.js';
import { QuerySandbox, type Sandbox } from '../../src/adapters/warehouse/query/sandbox.js';

let sandbox: QuerySandbox;
let checks: string[];
let counting: Sandbox;

beforeAll(async () => {
  sandbox = await QuerySandbox.open();
});
afterAll(() => sandbox.close());
beforeEach(() => {
  checks = [];
  // The real sandbox, noting each text it is asked to check.
  counting = {
    check: (text, catalog, options) => {
      checks.push(text);
      return sandbox.check(text, catalog, options);
    },
    locate: (checked, executed, message) => sandbox.locate(checked, executed, message),
    namedTables: (text, catalog) => sandbox.namedTables(text, catalog),
    close: () => Promise.resolve(),
  };
});

function catalog(masked: boolean, extra?: string): ReadableCatalog {
  const tables: ReadableCatalog = new Map([
    [
      'sales.orders',
      {
        ref: { datasetId: '0190a1b2-0000-7000-8000-000000000001', tableId: '0190a1b2-0000-7000-8000-000000000002' },
        columns: [
          { name: 'customer', type: 'STRING', repeated: false, masked },
          { name: 'amount', type: 'FLOAT64', repeated: false, masked: false },
        ],
      },
    ],
  ]);
  if (extra) tables.set(extra, null);
  return tables;
}

const TEXT = 'SELECT customer, sum(amount) AS total FROM sales.orders GROUP BY customer';
const LIMITS = { entries: 2, maxTextLength: 200, maxWeight: 100 };

it('checks the same text against the same catalog once', async () => {
  const cached = rememberingChecks(counting, LIMITS);
  const [first, second] = await Promise.all([cached.check(TEXT, catalog(false)), cached.check(TEXT, catalog(false))]);
  expect(second).toBe(first);
  expect(await cached.check(TEXT, catalog(false))).toBe(first);
  expect(checks).toEqual([TEXT]);
});

it('checks anew when the catalog, the options or the text differ', async () => {
  const cached = rememberingChecks(counting, { ...LIMITS, entries: 10 });
  const open = await cached.check(TEXT, catalog(false));
  const masked = await cached.check(TEXT, catalog(true));
  expect(open.readsMaskedTable).toBe(false);
  expect(masked.readsMaskedTable).toBe(true);
  await cached.check(TEXT, catalog(false, 'other.table'));
  await cached.check(TEXT, catalog(false), { names: true });
  await cached.check(`${TEXT} `, catalog(false));
  expect(checks).toHaveLength(5);
});

it('keeps no refusal, long text or large check, and lets the oldest go first', async () => {
  const cached = rememberingChecks(counting, LIMITS);
  for (let i = 0; i < 2; i += 1) await expect(cached.check('SELECT * FROM hr.salaries', catalog(false))).rejects.toThrow();
  const long = `SELECT 1 AS one -- ${'x'.repeat(200)}`;
  await cached.check(long, catalog(false));
  await cached.check(long, catalog(false));
  // Over maxWeight parts: many nodes of the text.
  const large = `SELECT ${Array.from({ length: 40 }, (_, i) => `${i} + ${i}`).join(', ')}`;
  await cached.check(large, catalog(false));
  await cached.check(large, catalog(false));
  expect(checks).toHaveLength(6);

  checks = [];
  await cached.check('SELECT 1 AS a', catalog(false));
  await cached.check('SELECT 2 AS b', catalog(false));
  await cached.check('SELECT 1 AS a', catalog(false));
  await cached.check('SELECT 3 AS c', catalog(false));
  // b was the least recently used of the two kept.
  await cached.check('SELECT 1 AS a', catalog(false));
  await cached.check('SELECT 2 AS b', catalog(false));
  expect(checks).toEqual(['SELECT 1 AS a', 'SELECT 2 AS b', 'SELECT 3 AS c', 'SELECT 2 AS b']);
});

it('tells apart inputs that JSON alone would write alike', () => {
  const withSet = (values: string[]) => new Map([['t', { values: new Set(values) }]]) as unknown as ReadableCatalog;
  expect(checkKey('q', withSet(['a']), {})).not.toBe(checkKey('q', withSet(['b']), {}));
  expect(checkKey('q', new Map(), { maxListElements: 1 })).not.toBe(checkKey('q', new Map(), {}));
  expect(checkKey('q', new Map(), {})).toBe(checkKey('q', new Map(), {}));
});
