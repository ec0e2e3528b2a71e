/**
 * The service as a real process (src/server.ts through tsx; with `built`, dist/server.js as the
 * image runs it) for the kill -9 tests, with the shortest heartbeat, lease and poll settings so
 * that a restarted process soon retries what a killed one left, and a client of its API with the
 * calls those tests share.
 */
import { startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { TEST_SECRET } from './context.js';

export function start(
  env: Record<string, string | undefined>,
  options: { built?: boolean } = {},
): ReturnType<typeof startService> {
  return startService(options.built ? 'dist/server.js' : 'src/server.ts', {
    built: options.built,
    // The built server as infra/docker/collab-api.Dockerfile runs it.
    nodeArgs: options.built ? ['--max-semi-space-size=8'] : [],
    cwd: appRoot,
    env: {
      PORT: '0',
      LOG_LEVEL: 'info',
      COLLAB_JWT_SECRET: TEST_SECRET,
      COLLAB_JWKS_URL: undefined,
      COLLAB_WORKER_POLL_SECONDS: '1',
      // As short as they go, so that a restarted service retries the dead one's job soon.
      COLLAB_JOB_HEARTBEAT_SECONDS: '10',
      COLLAB_WAREHOUSE_LEASE_SECONDS: '1',
      COLLAB_RECONCILE_INTERVAL_SECONDS: '1',
      ...env,
    },
    timeoutMs: 90_000,
    keepLogs: false,
  });
}

export function client(baseUrl: string, token: string) {
  const call = async (method: string, urlPath: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }) },
      body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, unknown> & { id: string } };
  };
  return {
    call,
    /** A project, dataset and table `T` (id INT64, name STRING) made through the API. */
    async table(): Promise<{ tableId: string; datasetId: string; datasetName: string; projectId: string }> {
      const project = await call('POST', '/api/v1/projects', { name: 'P' });
      const datasetName = `D${Date.now()}`;
      const dataset = await call('POST', '/api/v1/datasets', { name: datasetName, project_id: project.body.id });
      const schema = [
        { name: 'id', type: 'INT64', mode: 'REQUIRED' },
        { name: 'name', type: 'STRING' },
      ];
      const table = await call('POST', '/api/v1/tables', { name: 'T', schema, dataset_id: dataset.body.id });
      expect(table.status).toBe(201);
      return { tableId: table.body.id, datasetId: dataset.body.id, datasetName, projectId: project.body.id };
    },
    upload(tableId: string, csv: string) {
      const form = new FormData();
      form.append('table_id', tableId);
      form.append('file', new Blob([csv]), 'rows.csv');
      return call('POST', '/load_job/', form);
    },
  };
}
