import { z } from 'zod';
import type { TableJobKind } from '../generated/prisma/enums.js';
import { archivedAt, displayName, idParams, timestamp } from '../shared/schemas.js';

/** How the API names each kind of table job: list keys, documentation. */
export const JOB_KINDS = {
  import: { listKey: 'import_jobs', noun: 'import job', schemaId: 'ImportJob' },
  export: { listKey: 'export_jobs', noun: 'export job', schemaId: 'ExportJob' },
} as const satisfies Record<TableJobKind, { listKey: string; noun: string; schemaId: string }>;

export type JobKind = (typeof JOB_KINDS)[TableJobKind];

const jobFields = {
  id: z.uuid(),
  tenant_id: z.uuid(),
  table_id: z.uuid(),
  status: z.string(),
  created_at: timestamp,
  archived_at: archivedAt,
};

export type JobResponse = z.input<z.ZodObject<typeof jobFields>>;

export function jobSchemas(kind: JobKind) {
  const job = z.object(jobFields).meta({ id: kind.schemaId });
  return {
    job,
    list: z.object({ [kind.listKey]: z.array(job) }).meta({ id: `${kind.schemaId}List` }),
    createBody: z.strictObject({
      status: displayName(50).meta({ description: 'Free text; the service does not interpret it' }),
      table_id: z.uuid(),
    }),
  };
}

export const jobParams = idParams('job_id');
