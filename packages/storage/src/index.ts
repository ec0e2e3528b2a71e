export type { DownloadUrlOptions, ObjectStorage, StoredObject } from './object-storage.js';
export { checkKey } from './keys.js';
export { LocalObjectStorage } from './local.js';
export { GcsObjectStorage, type GcsOptions, type ServiceAccountCredentials } from './gcs.js';
export { signUrlPath, verifyUrlToken, type UrlTokenCheck } from './signed-url.js';
export { attachmentDisposition } from './content-disposition.js';
export { checkStorageBackendSettings, storageBackendSettings, type StorageBackendSettings } from './settings.js';
export { createObjectStorage } from './create.js';
