import { z } from 'zod';
import { EXPORT_COMPRESSIONS, EXPORT_FORMATS } from '../adapters/warehouse/query/index.js';
import { idParams, oneOf, timestamp } from '../shared/schemas.js';

export const EXPORT_STATUSES = ['PENDING', 'RUNNING', 'DONE', 'FAILED'] as const;

export const queryExportSchema = z
  .object({
    id: z.uuid(),
    query_job_id: z.uuid(),
    tenant_id: z.uuid(),
    status: z.enum(EXPORT_STATUSES),
    format: z.enum(EXPORT_FORMATS),
    compression: z.enum(EXPORT_COMPRESSIONS),
    storage_path: z.string().nullable().meta({ description: 'Where the file is in object storage, once DONE' }),
    signed_url: z.string().nullable().meta({ description: 'The last download URL handed out (GET .../download-url makes one)' }),
    error_message: z.string().nullable(),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
    expires_at: timestamp.nullable().meta({ description: 'When signed_url stops working' }),
  })
  .meta({ id: 'QueryExport' });

export type QueryExportResponse = z.input<typeof queryExportSchema>;

export const queryExportList = z.object({ exports: z.array(queryExportSchema) }).meta({ id: 'QueryExportList' });

export const exportParams = idParams('export_id');

export const createExportBody = z.strictObject({
  format: oneOf(EXPORT_FORMATS)
    .default('CSV')
    .meta({ description: 'CSV (with a header), JSON (one object a line), AVRO or PARQUET' }),
  compression: oneOf(EXPORT_COMPRESSIONS).default('GZIP').meta({
    description:
      'CSV and JSON: a gzip or zlib (deflate) file. PARQUET and AVRO compress inside the file: Parquet with its GZIP codec for GZIP and DEFLATE, Avro with its deflate codec for both.',
  }),
});

export type CreateExportInput = z.output<typeof createExportBody>;

export const downloadUrlSchema = z.object({ url: z.string(), expires_at: timestamp }).meta({ id: 'ExportDownloadUrl' });
