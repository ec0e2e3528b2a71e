import { z } from 'zod';
import { paginationQuery, queryInteger } from '@repo/http';
import { appliedRuleSchema, referencedTableSchema } from '../access-log/schemas.js';
import { queryExportSchema } from '../exports/schemas.js';
import { queryText } from '../queries/schemas.js';
import { idParams, timestamp } from '../shared/schemas.js';
import { QUERY_JOB_STATUSES } from './states.js';

const jsonObject = z.record(z.string(), z.unknown());
// BigQuery lists query stages, timeline samples and reservation usage as arrays of objects.
const jsonList = z.array(jsonObject);

/** BigQuery's largest maximumBytesBilled: an int64. */
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A limit on the bytes a job is billed, as BigQuery's maximumBytesBilled: a positive int64, which
 * BigQuery's API writes as a string of decimal digits. A JSON integer is taken too, up to 2^53 - 1
 * (JSON numbers past it lose digits in most clients); a larger limit is written as a string.
 */
export const maximumBytesBilled = z
  .union([
    z.int(),
    z.string().regex(/^[0-9]+$/, 'Must be a whole number of bytes written in decimal digits (no sign, point or spaces)'),
  ])
  .transform((value, ctx) => {
    const bytes = BigInt(value);
    if (bytes >= 1n && bytes <= INT64_MAX) return bytes;
    ctx.addIssue({
      code: 'custom',
      message: `Must be from 1 to ${INT64_MAX} bytes`,
      params: { type: bytes < 1n ? 'greater_than_equal' : 'less_than_equal' },
    });
    return z.NEVER;
  });

export const runQueryBody = z.strictObject({
  query_id: z.uuid(),
  query_text: queryText.meta({ description: "Must equal the saved query's text (409 otherwise)" }),
  dry_run: z.boolean().optional().meta({
    description: 'Check the query and tell what it would read and cost (200), without making a job or charging anything',
  }),
  maximum_bytes_billed: maximumBytesBilled.optional().meta({
    description:
      "BigQuery's maximumBytesBilled: a job whose query would be billed more bytes fails `bytesBilledLimitExceeded` before it runs, and is not charged. " +
      'A positive integer, or a string of decimal digits (BigQuery writes this int64 as a string) up to 9223372036854775807. ' +
      'Bytes billed count at least 10 MB per table and per query, so a limit under 10485760 fails every job.',
  }),
  timeout_seconds: z
    .int()
    .min(1)
    .optional()
    .meta({
      description:
        'How long the query may run before it is stopped and the job fails `timeout` (charged what it processed): a whole number of seconds, ' +
        "at most the service's limit COLLAB_QUERY_TIMEOUT_SECONDS (422 above it), which applies without one",
    }),
});

export type RunQueryInput = z.output<typeof runQueryBody>;

export const runQueryResponse = z.object({ job_id: z.uuid() }).meta({ id: 'QueryRun' });

export const dryRunResponse = z
  .object({
    total_bytes_processed: z.number().int().meta({ description: "What the query would read (BigQuery's measure)" }),
    total_bytes_billed: z.number().int().meta({ description: "What it would be billed for, with BigQuery's on-demand minimums" }),
    cost_usd: z.string().meta({ description: 'What a run would cost, USD with 6 places', example: '0.000060' }),
    referenced_tables: z.array(referencedTableSchema),
    rules: z.array(appliedRuleSchema).meta({ description: "The analysis rules of other tenants' tables a run would obey" }),
  })
  .meta({ id: 'QueryDryRun' });

export type DryRunResponse = z.input<typeof dryRunResponse>;

export const queryJobSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    query_id: z.uuid(),
    running_job_id: z.string().nullable().meta({ description: "The warehouse's job id, once the job started" }),
    status: z.enum(QUERY_JOB_STATUSES),
    error_result: jsonObject.nullable().meta({
      description:
        'A FAILED job: `{reason, message}`; a CANCELLED one: `{reason: "stopped", message}`, as BigQuery marks a cancelled job',
    }),
    error_details: jsonObject.nullable().meta({ description: 'A FAILED or CANCELLED job: `{errors: [{reason, message}]}`' }),
    created: timestamp,
    started: timestamp.nullable(),
    ended: timestamp.nullable(),
    total_rows: z.number().int().nullable(),
    total_bytes_processed: z
      .number()
      .int()
      .nullable()
      .meta({ description: "What the query read: BigQuery's totalBytesProcessed, or its measure of the columns read on DuckDB" }),
    total_bytes_billed: z.number().int().nullable().meta({
      description:
        "What the job is charged for (cost_usd): BigQuery's totalBytesBilled, on DuckDB the bytes processed with BigQuery's on-demand minimums (10 MB per table read, and per query); a cancelled or timed-out job's is what it processed until it stopped",
    }),
    total_slot_ms: z
      .number()
      .int()
      .nullable()
      .meta({ description: "BigQuery's slot milliseconds; elapsed milliseconds on DuckDB" }),
    cache_hit: z.boolean().nullable(),
    dml_stats: jsonObject.nullable(),
    query_plan: jsonList.nullable().meta({ description: "BigQuery's query stages (null on DuckDB)" }),
    timeline: jsonList.nullable().meta({ description: "BigQuery's progress samples (null on DuckDB)" }),
    destination_table: jsonObject.nullable(),
    script_statistics: jsonObject.nullable(),
    session_info: jsonObject.nullable(),
    transaction_info: jsonObject.nullable(),
    reservation_usage: jsonList.nullable(),
    num_dml_affected_rows: z.number().int().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    private_row_count: z.number().int().nullable(),
    suppressed_row_count: z.number().int().nullable().meta({
      description:
        "Result rows (groups) that an aggregation rule of another tenant's table dropped: fewer distinct privacy units than it asks",
    }),
    applied_rules: z
      .array(appliedRuleSchema)
      .meta({ description: "The analysis rules of other tenants' tables the job applied, as they were when it started" }),
    maximum_bytes_billed: z
      .string()
      .nullable()
      .meta({ description: "The run's limit on the bytes billed, as BigQuery writes an int64: a string of decimal digits" }),
    timeout_seconds: z.number().int().nullable().meta({ description: "The run's time limit in seconds, when it set one" }),
    results_expire_at: timestamp.nullable().meta({
      description:
        "A DONE job's: when its stored result and its exports' files expire (COLLAB_RESULT_TTL_DAYS after it ended). From then on, pages, " +
        'new exports and download links answer 410, and the rows and files are deleted',
    }),
    exports: z.array(queryExportSchema),
  })
  .meta({ id: 'QueryJob' });

export type QueryJobResponse = z.input<typeof queryJobSchema>;

export const queryJobList = z.object({ query_jobs: z.array(queryJobSchema) }).meta({ id: 'QueryJobList' });

export const queryJobParams = idParams('job_id');

export const queryJobListQuery = z.strictObject(paginationQuery({ defaultLimit: 100, maxLimit: 1000, offsetName: 'skip' }));

/** Rows of a results page unless `page_size` says otherwise. */
export const DEFAULT_RESULT_PAGE_SIZE = 50;

export const resultPageQuery = z.strictObject({
  page: queryInteger({ min: 1, default: 1, description: 'Page number, from 1' }),
  page_size: queryInteger({ min: 1, max: 200, default: DEFAULT_RESULT_PAGE_SIZE, description: 'Rows per page' }),
  timeout_ms: queryInteger({
    min: 0,
    max: 60_000,
    default: 0,
    description:
      "How long to wait for a PENDING or RUNNING job to end before answering, in milliseconds (BigQuery's getQueryResults timeoutMs): " +
      'the page comes as soon as the job is DONE; a job still running then is a 409, as without a wait',
  }),
});

export const resultPageSchema = z
  .object({
    rows: z.array(z.object({ data: jsonObject })),
    columns: z.array(z.string()),
    schema: z.array(z.object({ name: z.string(), type: z.string() })).meta({
      description:
        "The result's columns in order, with their types as BigQuery names them (the table API's names: STRING, INT64, FLOAT64, NUMERIC, " +
        'BIGNUMERIC, BOOL, BYTES, DATE, DATETIME, TIMESTAMP, TIME, INTERVAL, JSON; `ARRAY<...>` and ``STRUCT<`name` ...>`` for nested values)',
    }),
    column_privacy: z.record(z.string(), z.enum(['public', 'private'])).meta({
      description: "`private` for a column that comes from a private column of another tenant's table: its values are null",
    }),
    total_rows: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    total_pages: z.number().int(),
  })
  .meta({ id: 'QueryResultPage' });

export type ResultPageResponse = z.input<typeof resultPageSchema>;
