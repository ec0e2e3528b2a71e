import { BadRequestError, ForbiddenError } from '@repo/errors';
import { appliedRules, referencedTables } from '../../src/access-log/record.js';
import type { ReadableCatalog } from '../../src/adapters/warehouse/query/analyze.js';
import { QueryFailure } from '../../src/adapters/warehouse/query/interface.js';
import { dryRunRefusal } from '../../src/query-jobs/dry-run.js';
import { avroNames, uniqueNames } from '../../src/adapters/warehouse/query/duckdb.js';
import { exportFile, exportRefusal } from '../../src/exports/service.js';
import { pageBounds, resultsUnavailable, workerMayRun } from '../../src/query-jobs/states.js';
import { costMicros, formatUsd, parseUsd, quotaRefusal, quotaStatus, usageAt } from '../../src/quota/rules.js';

describe('money', () => {
  it('parses and formats decimal USD with 6 places', () => {
    expect(parseUsd('6.25')).toBe(6_250_000n);
    expect(parseUsd('0.000001')).toBe(1n);
    expect(parseUsd('10')).toBe(10_000_000n);
    for (const bad of ['-1', '1.1234567', '', '1e3', ' 1', '1.', '.5', 'NaN', '1\u0000']) expect(parseUsd(bad)).toBeUndefined();
    expect(formatUsd(6_250_000n)).toBe('6.250000');
    expect(formatUsd(1n)).toBe('0.000001');
    expect(formatUsd(0n)).toBe('0.000000');
  });

  it('prices bytes per TiB, rounded half up to the micro-dollar', () => {
    const tib = 2n ** 40n;
    expect(costMicros(tib, 6_250_000n)).toBe(6_250_000n);
    expect(costMicros(tib / 2n, 6_250_000n)).toBe(3_125_000n);
    expect(costMicros(0n, 6_250_000n)).toBe(0n);
    // 1 MiB at 6.25 USD/TiB is 5.96e-6 USD: 6 micro-dollars.
    expect(costMicros(2n ** 20n, 6_250_000n)).toBe(6n);
    // 10^15 bytes are 909.49 TiB: 5,684.341886 USD.
    expect(costMicros(10n ** 15n, 6_250_000n)).toBe(5_684_341_886n);
  });
});

describe('quota', () => {
  const usage = {
    dailyMicros: 5n,
    monthlyMicros: 50n,
    lastResetDaily: new Date('2026-11-23T00:00:00Z'),
    lastResetMonthly: new Date('2026-11-01T00:00:00Z'),
  };

  it('starts the day and the month again at UTC midnight', () => {
    expect(usageAt(usage, new Date('2026-11-23T23:59:59.999Z'))).toEqual(usage);
    expect(usageAt(usage, new Date('2026-11-24T00:00:00Z'))).toEqual({
      ...usage,
      dailyMicros: 0n,
      lastResetDaily: new Date('2026-11-24T00:00:00Z'),
    });
    expect(usageAt(usage, new Date('2026-12-01T00:00:00Z'))).toEqual({
      dailyMicros: 0n,
      monthlyMicros: 0n,
      lastResetDaily: new Date('2026-12-01T00:00:00Z'),
      lastResetMonthly: new Date('2026-12-01T00:00:00Z'),
    });
  });

  it('is used up once the usage reaches it; a quota of 0 allows nothing', () => {
    expect(quotaStatus({ dailyMicros: 10n, monthlyMicros: 100n }, { dailyMicros: 5n, monthlyMicros: 100n })).toEqual({
      dailyRemainingMicros: 5n,
      monthlyRemainingMicros: 0n,
      dailyPercentageUsed: 50,
      monthlyPercentageUsed: 100,
      dailyExceeded: false,
      monthlyExceeded: true,
    });
    expect(quotaStatus({ dailyMicros: 0n, monthlyMicros: 3n }, { dailyMicros: 0n, monthlyMicros: 1n })).toMatchObject({
      dailyExceeded: true,
      dailyPercentageUsed: 100,
      monthlyPercentageUsed: 33.33,
    });
    expect(
      quotaStatus({ dailyMicros: 10n, monthlyMicros: 10n }, { dailyMicros: 16n, monthlyMicros: 16n }).dailyRemainingMicros,
    ).toBe(0n);
  });

  it('says why a run is refused and when to try again', () => {
    const now = new Date('2026-11-23T23:00:00Z');
    const ok = quotaStatus({ dailyMicros: 10n, monthlyMicros: 10n }, { dailyMicros: 1n, monthlyMicros: 1n });
    expect(quotaRefusal(ok, now)).toBeUndefined();
    const daily = quotaStatus({ dailyMicros: 1n, monthlyMicros: 10n }, { dailyMicros: 1n, monthlyMicros: 1n });
    expect(quotaRefusal(daily, now)).toEqual({ message: expect.stringMatching(/daily/), retryAfterSeconds: 3600 });
    const monthly = quotaStatus({ dailyMicros: 10n, monthlyMicros: 1n }, { dailyMicros: 1n, monthlyMicros: 1n });
    expect(quotaRefusal(monthly, now)).toEqual({
      message: expect.stringMatching(/monthly/),
      retryAfterSeconds: 3600 + 7 * 86_400,
    });
  });
});

describe('job states and pages', () => {
  it('runs PENDING and interrupted RUNNING jobs only; results of DONE jobs only', () => {
    expect(['PENDING', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED'].map((s) => workerMayRun(s as never))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(resultsUnavailable('DONE')).toBeUndefined();
    expect(resultsUnavailable('RUNNING')).toMatch(/once it is DONE/);
    expect(resultsUnavailable('FAILED')).toMatch(/no results/);
  });

  it('bounds pages', () => {
    expect(pageBounds(1000, 1, 200)).toEqual({ offset: 0, limit: 200, totalPages: 5 });
    expect(pageBounds(1001, 6, 200)).toEqual({ offset: 1000, limit: 1, totalPages: 6 });
    expect(pageBounds(1000, 7, 200)).toEqual({ offset: 1200, limit: 0, totalPages: 5 });
    expect(pageBounds(0, 1, 50)).toEqual({ offset: 0, limit: 0, totalPages: 0 });
    expect(pageBounds(10_000_000, 50_000, 200)).toEqual({ offset: 9_999_800, limit: 200, totalPages: 50_000 });
  });

  it('names columns and files', () => {
    expect(uniqueNames(['a', 'A', 'a', '', 'b'])).toEqual(['a', 'A_2', 'a_3', 'column', 'b']);
    expect(uniqueNames(['a', 'a', 'a_2', 'x_2', 'x', 'x'])).toEqual(['a', 'a_2', 'a_2_2', 'x_2', 'x', 'x_3']);
    // 20,000 columns of one name (SELECT 1 a, 1 a, ...): each suffix found at once, not tried from _2 again.
    const many = uniqueNames(Array.from({ length: 20_000 }, () => 'a'));
    expect([many[1], many.at(-1), new Set(many).size]).toEqual(['a_2', 'a_20000', 20_000]);
    expect(avroNames(['count_star()', '1st', 'ok', 'ok'])).toEqual(['count_star__', '_1st', 'ok', 'ok_2']);
    expect(exportFile('CSV', 'GZIP')).toEqual({ extension: 'csv.gz', contentType: 'application/gzip' });
    expect(exportFile('JSON', 'DEFLATE')).toEqual({ extension: 'json.deflate', contentType: 'application/zlib' });
    expect(exportFile('PARQUET', 'GZIP').extension).toBe('parquet');
    expect(exportFile('AVRO', 'DEFLATE').extension).toBe('avro');
  });
});

describe('rules of shared data', () => {
  const shared = { datasetId: '01a209a3-8860-74eb-93e3-3e5b5f32290a', tableId: '01a209a3-8879-7269-8cc5-65c132e568d9' };
  const own = { datasetId: '01a209a3-8860-74eb-93e3-3e5b5f32290b', tableId: '01a209a3-8879-7269-8cc5-65c132e568da' };
  const catalog: ReadableCatalog = new Map([
    [
      'hr.visits',
      {
        ref: shared,
        name: 'HR.Visits',
        columns: [
          { name: 'customer', type: 'INT64', repeated: false, masked: false },
          { name: 'email', type: 'STRING', repeated: false, masked: true },
        ],
        shared: { tenantId: 'owner', aggregation: { privacyUnit: 'customer', minDistinct: 3 }, allowExports: false },
      },
    ],
    ['sales.orders', { ref: own, name: 'sales.orders', columns: [] }],
  ]);

  it("lists the tables a query references, and the rules of other tenants' among them", () => {
    expect(referencedTables(catalog, ['hr.visits', 'sales.orders'])).toEqual([
      { dataset_id: shared.datasetId, table_id: shared.tableId, name: 'HR.Visits' },
      { dataset_id: own.datasetId, table_id: own.tableId, name: 'sales.orders' },
    ]);
    expect(appliedRules(catalog, ['sales.orders', 'hr.visits'])).toEqual([
      {
        dataset_id: shared.datasetId,
        table_id: shared.tableId,
        name: 'HR.Visits',
        tenant_id: 'owner',
        join_only_columns: ['email'],
        analysis_rule: { type: 'aggregation', privacy_unit: 'customer', min_distinct: 3 },
        allow_exports: false,
      },
    ]);
    expect(appliedRules(catalog, ['sales.orders'])).toEqual([]);
  });

  it("refuses exports naming the datasets whose owners allow none, and dry runs as a run's failure would", () => {
    expect(exportRefusal([])).toBeUndefined();
    expect(exportRefusal([{ name: 'hr' }])).toMatch(
      /^Exports of this job's result are not allowed: it read dataset "hr" of another tenant/,
    );
    expect(exportRefusal([{ name: 'a' }, { name: 'b' }])).toMatch(/read datasets "a", "b"/);
    const denied = dryRunRefusal(new QueryFailure('accessDenied', 'Column x is join-only'));
    expect(denied).toBeInstanceOf(ForbiddenError);
    expect(denied.message).toBe('Column x is join-only');
    expect(dryRunRefusal(new QueryFailure('invalidQuery', 'Binder Error: x'))).toBeInstanceOf(BadRequestError);
  });
});
