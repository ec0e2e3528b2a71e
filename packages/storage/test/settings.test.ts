import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { configProblems, documentSettings, loadConfig } from '@repo/config';
import {
  checkStorageBackendSettings,
  createObjectStorage,
  DatabaseObjectStorage,
  GcsObjectStorage,
  LocalObjectStorage,
  storageBackendSettings,
} from '../src/index.js';

const schema = z.object(storageBackendSettings()).superRefine(checkStorageBackendSettings);
const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
const KEY_JSON = JSON.stringify({
  type: 'service_account',
  client_email: 'a@p.iam.gserviceaccount.com',
  private_key: privateKey,
});

const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

describe('storage backend settings', () => {
  it('default to local storage', () => {
    expect(loadConfig(schema, {})).toEqual({ STORAGE_BACKEND: 'local' });
  });

  it('read the gcs backend with its bucket, endpoint and key', () => {
    const settings = loadConfig(schema, {
      STORAGE_BACKEND: 'gcs',
      GCS_BUCKET: 'attachments',
      GCS_API_ENDPOINT: 'http://127.0.0.1:4443/',
      GCS_CREDENTIALS_JSON: KEY_JSON,
    });
    expect(settings).toMatchObject({
      STORAGE_BACKEND: 'gcs',
      GCS_BUCKET: 'attachments',
      GCS_API_ENDPOINT: 'http://127.0.0.1:4443',
    });
    expect(settings.GCS_CREDENTIALS_JSON).toMatchObject({ client_email: 'a@p.iam.gserviceaccount.com' });
  });

  it.each([
    [{ STORAGE_BACKEND: 's3' }, 'STORAGE_BACKEND must be one of local, gcs, database (got "s3")'],
    [{ STORAGE_BACKEND: 'gcs' }, 'GCS_BUCKET is required when STORAGE_BACKEND is gcs'],
    [{ GCS_API_ENDPOINT: 'storage.example.com' }, 'GCS_API_ENDPOINT must be a http or https URL (got "storage.example.com")'],
    [
      { GCS_CREDENTIALS_JSON: '{"client_email": "a@b"}' },
      'GCS_CREDENTIALS_JSON must be a service-account key as JSON, with client_email and private_key (value hidden)',
    ],
    [
      { GCS_CREDENTIALS_JSON: 'not json' },
      'GCS_CREDENTIALS_JSON must be a service-account key as JSON, with client_email and private_key (value hidden)',
    ],
  ])('name the variable that is wrong: %j', (env, problem) => {
    expect(problemsOf(env)).toEqual([problem]);
  });

  it('are documented, each with what it expects', () => {
    const docs = documentSettings(schema);
    expect(docs.map((doc) => doc.name)).toEqual(['STORAGE_BACKEND', 'GCS_BUCKET', 'GCS_API_ENDPOINT', 'GCS_CREDENTIALS_JSON']);
    for (const doc of docs) expect(doc.description).not.toBe('');
    expect(docs.find((doc) => doc.name === 'GCS_CREDENTIALS_JSON')).toMatchObject({
      required: false,
      expects: 'a service-account key as JSON, with client_email and private_key',
    });
  });
});

describe('createObjectStorage', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'storage-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('builds the backend the settings choose', async () => {
    const local = createObjectStorage(loadConfig(schema, {}), { localRoot: path.join(root, 'objects') });
    expect(local).toBeInstanceOf(LocalObjectStorage);
    await local.put('k/a', Buffer.from('x'), { contentType: 'text/plain' });
    expect((await local.get('k/a')).toString()).toBe('x');

    const gcs = createObjectStorage(
      loadConfig(schema, { STORAGE_BACKEND: 'gcs', GCS_BUCKET: 'b', GCS_CREDENTIALS_JSON: KEY_JSON }),
      {
        localRoot: root,
      },
    );
    expect(gcs).toBeInstanceOf(GcsObjectStorage);
    expect(gcs.backend).toBe('gcs');

    const settings = loadConfig(schema, { STORAGE_BACKEND: 'database' });
    const database = createObjectStorage(settings, { localRoot: root, database: { query: () => Promise.resolve({ rows: [] }) } });
    expect(database).toBeInstanceOf(DatabaseObjectStorage);
    expect(() => createObjectStorage(settings, { localRoot: root })).toThrow('STORAGE_BACKEND=database needs a database client');
  });
});
