import { z } from 'zod';
import { SOURCE_FORMATS, WRITE_DISPOSITIONS } from '../adapters/warehouse/index.js';
import { paginationQuery } from '@repo/http';
import { fileBytes, idParams, oneOf, timestamp } from '../shared/schemas.js';
import { EXTENSION_LIST } from './formats.js';

export const LOAD_JOB_STATUSES = ['Pending', 'Running', 'Completed', 'Failed', 'Cancelled'] as const;

// Form fields arrive as text; JSON bodies may send a real boolean.
const flag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'on', 'off'])])
  .transform((value) => value === true || value === 'true' || value === '1' || value === 'on');

/** The fields of `POST /load_job/`, as multipart form fields (with the file) or a JSON body (without). */
export const createLoadJobInput = z.strictObject({
  table_id: z.uuid(),
  write_disposition: oneOf(WRITE_DISPOSITIONS)
    .default('WRITE_APPEND')
    .meta({ description: 'WRITE_APPEND adds rows; WRITE_TRUNCATE replaces them; WRITE_EMPTY loads only into an empty table' }),
  autodetect: flag.default(false).meta({
    description: 'Infer the columns from the file; they replace the whole schema of the table (modes and private flags too)',
  }),
  source_format: oneOf(SOURCE_FORMATS)
    .optional()
    .meta({ description: `Inferred from the file's extension when absent (${EXTENSION_LIST}); required without a file` }),
});

export type CreateLoadJobInput = z.output<typeof createLoadJobInput>;

/** `POST /load_job/` as a multipart form, for the OpenAPI document: the fields, and the file. */
export const createLoadJobForm = createLoadJobInput.extend({
  file: fileBytes.optional().meta({
    description:
      'The file, streamed into object storage (COLLAB_LOAD_MAX_UPLOAD_BYTES at most: 413 above); without it the job waits for the file at its upload_url',
  }),
});

const problem = z.object({
  row: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'The data row, from 1 (a header does not count); null for the file as a whole' }),
  column: z.string().nullable(),
  reason: z.string(),
});

export const loadJobSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    table_id: z.uuid(),
    status: z.enum(LOAD_JOB_STATUSES),
    source_uri: z.string().meta({ description: 'The uploaded file in object storage (`gs://bucket/key` on Cloud Storage)' }),
    source_format: z.enum(SOURCE_FORMATS),
    write_disposition: z.enum(WRITE_DISPOSITIONS),
    autodetect: z.boolean(),
    statistics: z.object({
      rows_loaded: z.number().int().nullable(),
      bytes_processed: z.number().int().nullable(),
      duration_ms: z.number().int().nullable(),
    }),
    error_details: z
      .object({
        message: z.string(),
        problems: z.array(problem).meta({ description: 'The first problems in file order (at most 10)' }),
        problem_count: z.number().int().meta({ description: 'How many problems there are in all' }),
      })
      .nullable(),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    ended_at: timestamp.nullable(),
  })
  .meta({ id: 'LoadJob' });

export type LoadJobResponse = z.input<typeof loadJobSchema>;

export const createdLoadJobSchema = loadJobSchema
  .extend({
    upload_url: z.string().optional().meta({
      description:
        'Only for a job created without a file: PUT the file here, with `Content-Type: application/octet-stream`, then call `POST /load_job/{job_id}/upload`',
    }),
    upload_url_expires_at: timestamp.optional(),
  })
  .meta({ id: 'CreatedLoadJob' });

/** The answer to a file PUT to an upload link. */
export const linkUploadSchema = z.object({ size: z.number().int().meta({ description: 'The bytes stored' }) });

export const loadJobList = z.object({ load_jobs: z.array(loadJobSchema) }).meta({ id: 'LoadJobList' });

export const loadJobParams = idParams('job_id');

export const loadJobListQuery = z.strictObject({
  table_id: z.uuid(),
  ...paginationQuery({ defaultLimit: 100, maxLimit: 1000, offsetName: 'skip' }),
});
