import { z } from 'zod';
import { setting } from '@repo/config';
import type { ServiceAccountCredentials } from './gcs.js';
import { STORAGE_BACKENDS } from './object-storage.js';

const CREDENTIALS_EXPECTED = 'a service-account key as JSON, with client_email and private_key';

/** Environment variables that choose and configure the object store. */
export function storageBackendSettings() {
  return {
    STORAGE_BACKEND: setting
      .oneOf(STORAGE_BACKENDS)
      .default('local')
      .describe(
        'Where attachments and other files are stored: `local` (files under DATA_DIR), `gcs` (Google Cloud Storage) or `database` (rows in the service’s own database).',
      ),
    GCS_BUCKET: setting.string().optional().describe('Bucket of the `gcs` backend. Required with STORAGE_BACKEND=gcs.'),
    GCS_API_ENDPOINT: setting
      .url()
      .optional()
      .describe(
        'Cloud Storage JSON API endpoint, e.g. a Private Service Connect address or an emulator. Default: the public endpoint.',
      ),
    GCS_CREDENTIALS_JSON: setting
      .string()
      .transform((raw, ctx) => {
        const credentials = parseCredentials(raw);
        if (credentials) return credentials;
        ctx.addIssue({ code: 'custom', message: `must be ${CREDENTIALS_EXPECTED}` });
        return z.NEVER;
      })
      .meta({ expects: CREDENTIALS_EXPECTED })
      .optional()
      .describe('Service-account key of the `gcs` backend. Unset: Application Default Credentials (e.g. GKE Workload Identity).'),
  };
}

export type StorageBackendSettings = z.output<z.ZodObject<ReturnType<typeof storageBackendSettings>>>;

/** For the app's `superRefine`: names the variable the chosen backend is missing. */
export function checkStorageBackendSettings(settings: StorageBackendSettings, ctx: z.RefinementCtx): void {
  if (settings.STORAGE_BACKEND === 'gcs' && settings.GCS_BUCKET === undefined) {
    ctx.addIssue({ code: 'custom', path: ['GCS_BUCKET'], message: 'is required when STORAGE_BACKEND is gcs' });
  }
}

function parseCredentials(raw: string): ServiceAccountCredentials | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== 'object' || value === null) return undefined;
    const { client_email: email, private_key: key } = value as Record<string, unknown>;
    return typeof email === 'string' && typeof key === 'string' ? (value as ServiceAccountCredentials) : undefined;
  } catch {
    return undefined;
  }
}
