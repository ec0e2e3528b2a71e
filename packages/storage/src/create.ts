import { type SqlClient, DatabaseObjectStorage } from './database.js';
import { GcsObjectStorage } from './gcs.js';
import { LocalObjectStorage } from './local.js';
import type { ObjectStorage } from './object-storage.js';
import type { StorageBackendSettings } from './settings.js';

/**
 * The object store the settings choose: `localRoot` is the folder of the local backend,
 * `database` the client of the database backend (the app's own database).
 */
export function createObjectStorage(
  settings: StorageBackendSettings,
  options: { localRoot: string; database?: SqlClient },
): ObjectStorage {
  switch (settings.STORAGE_BACKEND) {
    case 'local':
      return new LocalObjectStorage(options.localRoot);
    case 'database':
      if (options.database === undefined) throw new Error('STORAGE_BACKEND=database needs a database client');
      return new DatabaseObjectStorage(options.database);
    case 'gcs':
      if (settings.GCS_BUCKET === undefined) throw new Error('GCS_BUCKET is required when STORAGE_BACKEND is gcs');
      return new GcsObjectStorage({
        bucket: settings.GCS_BUCKET,
        apiEndpoint: settings.GCS_API_ENDPOINT,
        credentials: settings.GCS_CREDENTIALS_JSON,
      });
  }
}
