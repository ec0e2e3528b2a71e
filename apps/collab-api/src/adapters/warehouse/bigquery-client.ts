/**
 * The BigQuery client both BigQuery adapters use (the warehouse, bigquery.ts, and query jobs,
 * query/bigquery.ts), built from the settings, and how its failures become API errors.
 */
import { BigQuery } from '@google-cloud/bigquery';
import { UpstreamError } from '@repo/errors';
import { PassThroughClient } from 'google-auth-library';
import { withoutPhysicalNames } from './names.js';
import type { WarehouseSettings } from './settings.js';

export interface BigQueryOptions {
  projectId: string;
  /** Location of new datasets, e.g. `US`, `EU`, `europe-west1`; tables and jobs live in their dataset's. */
  location: string;
  /** API base URL instead of Google's, e.g. an emulator. */
  apiEndpoint?: string;
  /**
   * `application-default`: Google's usual lookup (GOOGLE_APPLICATION_CREDENTIALS, workload
   * identity, metadata server); `none`: unauthenticated requests, for emulators; or a key file.
   */
  credentials: 'application-default' | 'none' | { keyFilename: string };
  /**
   * Retry rate limits, 5xx answers and lost connections with exponential backoff (the client's
   * default: up to 3 retries, some 15 s in all). Default true.
   */
  autoRetry?: boolean;
}

/** The options COLLAB_BIGQUERY_* configure. */
export function bigQueryOptions(settings: WarehouseSettings): BigQueryOptions {
  // checkWarehouseSettings has made sure of this; repeated for a settings object built by hand.
  if (!settings.COLLAB_BIGQUERY_PROJECT) throw new TypeError('COLLAB_BIGQUERY_PROJECT is required for BigQuery');
  const credentials = settings.COLLAB_BIGQUERY_CREDENTIALS;
  return {
    projectId: settings.COLLAB_BIGQUERY_PROJECT,
    location: settings.COLLAB_BIGQUERY_LOCATION,
    apiEndpoint: settings.COLLAB_BIGQUERY_API_ENDPOINT,
    credentials:
      credentials === undefined ? 'application-default' : credentials === 'none' ? 'none' : { keyFilename: credentials },
  };
}

export function bigQueryClient(options: BigQueryOptions): BigQuery {
  const { credentials } = options;
  return new BigQuery({
    projectId: options.projectId,
    location: options.location,
    ...(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {}),
    ...(credentials === 'none' ? { authClient: new PassThroughClient() } : {}),
    ...(typeof credentials === 'object' ? { keyFilename: credentials.keyFilename } : {}),
    retryOptions: { autoRetry: options.autoRetry ?? true },
  });
}

/** One REST call under `projects/<project>/` (the client's own request, with its auth and retries): the JSON answer. */
export function restCall<T>(
  client: BigQuery,
  request: { method?: 'GET' | 'POST'; uri: string; qs?: Record<string, unknown>; json?: unknown },
): Promise<T> {
  return new Promise((resolve, reject) => {
    client.request(request, (error, body) => {
      if (error) reject(error);
      else resolve(body as T);
    });
  });
}

interface GoogleApiError {
  code?: unknown;
  message?: unknown;
  errors?: { reason?: string; message?: string }[];
}

/** Runs one API call; its failure becomes a 502 that carries BigQuery's message and reason. */
export async function call<T>(action: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw toUpstreamError(action, error);
  }
}

/**
 * A call whose failure with `status` means the change is already made: 404 for a delete (what is
 * gone needs no deleting), 409 for an insert (physical names come from ids, so what is there is
 * this record's, made by an earlier attempt).
 */
export async function ignoring(status: 404 | 409, request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (error) {
    if (error instanceof UpstreamError && error.details.status === status) return;
    throw error;
  }
}

export function toUpstreamError(action: string, error: unknown): UpstreamError {
  const { code, message, errors } = (error ?? {}) as GoogleApiError;
  // Anything without an HTTP status never reached BigQuery (DNS, connection, TLS); its text
  // names internal addresses, so it stays in the logged cause.
  if (typeof code !== 'number') {
    return new UpstreamError(`BigQuery could not ${action}: the API could not be reached`, { cause: error });
  }
  const [first] = errors ?? [];
  const reason = first?.reason;
  const text = first?.message ?? (typeof message === 'string' && message ? message.split('\n')[0]! : `HTTP ${code}`);
  return new UpstreamError(`BigQuery could not ${action}: ${withoutPhysicalNames(text)}${reason ? ` (${reason})` : ''}`, {
    details: { status: code, ...(reason ? { reason } : {}) },
    cause: error,
  });
}
