import { GcsObjectStorage } from './gcs.js';
import { LocalObjectStorage } from './local.js';
import type { ObjectStorage } from './object-storage.js';
import type { StorageBackendSettings } from './settings.js';

/** The object store the settings choose; `localRoot` is the folder of the local backend. */
export function createObjectStorage(settings: StorageBackendSettings, options: { localRoot: string }): ObjectStorage {
  if (settings.STORAGE_BACKEND === 'local') return new LocalObjectStorage(options.localRoot);
  if (settings.GCS_BUCKET === undefined) throw new Error('GCS_BUCKET is required when STORAGE_BACKEND is gcs');
  return new GcsObjectStorage({
    bucket: settings.GCS_BUCKET,
    apiEndpoint: settings.GCS_API_ENDPOINT,
    credentials: settings.GCS_CREDENTIALS_JSON,
  });
}
