import type { Express } from 'express';
import request from 'supertest';

/** The operator key the tests configure (INBOX_API_KEYS). */
export const OPERATOR_KEY = 'operator-key-for-tests';

/** Requests to the app with `Authorization: Bearer <key>`. */
export function as(app: Express, key: string) {
  const auth = { authorization: `Bearer ${key}` };
  return {
    get: (path: string) => request(app).get(path).set(auth),
    post: (path: string, body?: object) => request(app).post(path).set(auth).send(body),
    patch: (path: string, body?: object) => request(app).patch(path).set(auth).send(body),
    delete: (path: string) => request(app).delete(path).set(auth),
  };
}

export interface CreatedKey {
  id: string;
  key: string;
  organization_id: string;
  inbox_ids: string[] | null;
}

/** A key made by `creator` (201 expected). */
export async function createKey(app: Express, creator: string, body: object): Promise<CreatedKey> {
  const res = await as(app, creator).post('/v1/api-keys', { name: 'Test key', ...body });
  if (res.status !== 201) throw new Error(`POST /v1/api-keys answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as CreatedKey;
}

export async function createOrganization(app: Express, name: string): Promise<{ id: string; name: string }> {
  return (await as(app, OPERATOR_KEY).post('/v1/organizations', { name }).expect(201)).body;
}

export async function createInbox(
  app: Express,
  creator: string,
  body: { email_username: string; organization_id?: string },
): Promise<{ id: string; email_address: string; organization_id: string }> {
  const res = await as(app, creator).post('/v1/inboxes', { name: body.email_username, ...body });
  if (res.status !== 201) throw new Error(`POST /v1/inboxes answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}
