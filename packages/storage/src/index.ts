export {
  describeStored,
  hashInTurns,
  STORAGE_BACKENDS,
  type DownloadUrlOptions,
  type ObjectStorage,
  type OpenedObject,
  type StorageBackend,
  type StoredObject,
  type UploadUrlOptions,
} from './object-storage.js';
export { checkKey } from './keys.js';
export { LocalObjectStorage } from './local.js';
export { DatabaseObjectStorage, type SqlClient } from './database.js';
export { GcsObjectStorage, type GcsOptions, type ServiceAccountCredentials } from './gcs.js';
export { signUrlPath, verifyUrlToken, type UrlTokenCheck } from './signed-url.js';
export { attachmentDisposition } from './content-disposition.js';
export { checkStorageBackendSettings, storageBackendSettings, type StorageBackendSettings } from './settings.js';
export { createObjectStorage } from './create.js';
