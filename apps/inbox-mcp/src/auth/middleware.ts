import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { AppError, BadRequestError } from '@repo/errors';
import type { InboxApiClient } from '../api-client.js';
import { bearerChallenge, credentialsOf, keyDigest, METADATA_PATH, protectedResourceMetadata, publicBaseUrl } from './bearer.js';
import type { KeyChecks } from './key-checks.js';

/** Who an authenticated request comes from. */
export interface Caller {
  /** `key:<SHA-256 of the key>`, or `anonymous` (SERVICE_API_KEY, with --allow-anonymous). */
  identity: string;
  /** inbox-api as this caller: with their key, or SERVICE_API_KEY for an anonymous one. */
  api: InboxApiClient;
}

export interface AuthOptions {
  /** inbox-api with SERVICE_API_KEY. */
  api: InboxApiClient;
  keyChecks: KeyChecks;
  /** --allow-anonymous: a request without an Authorization header acts with SERVICE_API_KEY. */
  allowAnonymous: boolean;
  /** PUBLIC_BASE_URL. */
  publicBaseUrl: string | undefined;
  /** The MCP endpoint's path (`/mcp`, `/sse`): with the base URL, the protected resource. */
  endpoint: string;
}

const ANONYMOUS = 'anonymous';
const CALLER = 'mcpCaller';

function baseUrlOf(req: Request, options: Pick<AuthOptions, 'publicBaseUrl'>): string {
  const base = publicBaseUrl(options.publicBaseUrl, { protocol: req.protocol, host: req.host });
  if (base === undefined) throw new BadRequestError('The Host header is not a host name');
  return base;
}

/**
 * Every request to an MCP endpoint presents an API key of inbox-api as `Authorization: Bearer`
 * (the MCP authorization spec: servers verify every request, never a session instead). Without
 * one: 401 with the challenge naming the protected-resource metadata, unless anonymous callers
 * are allowed. A key inbox-api refuses: 401 `invalid_token`. The caller is left for the route
 * (callerOf), with the inbox-api client that acts as them.
 */
export function authenticate(options: AuthOptions): RequestHandler {
  const unauthorized = (req: Request, message: string, refused?: { description: string }) =>
    new AppError('unauthorized', message, {
      headers: { 'WWW-Authenticate': bearerChallenge(`${baseUrlOf(req, options)}${METADATA_PATH}`, refused) },
    });
  return async (req, res, next) => {
    const credentials = credentialsOf(req.get('authorization'));
    if (credentials.kind === 'none' && options.allowAnonymous) {
      setCaller(res, { identity: ANONYMOUS, api: options.api });
      return next();
    }
    switch (credentials.kind) {
      case 'none':
      case 'unsupported':
        throw unauthorized(req, 'Authentication required: send Authorization: Bearer <key>, with an API key of inbox-api');
      case 'malformed':
        throw unauthorized(req, 'Malformed Authorization header: send Authorization: Bearer <key>', {
          description: 'Authorization must be Bearer followed by one key',
        });
      case 'bearer':
        if ((await options.keyChecks.verdictOn(credentials.token)) === 'rejected') {
          throw unauthorized(req, 'inbox-api refused this API key', { description: 'inbox-api refused this API key' });
        }
        setCaller(res, { identity: `key:${keyDigest(credentials.token)}`, api: options.api.withApiKey(credentials.token) });
        return next();
    }
  };
}

function setCaller(res: Response, caller: Caller): void {
  res.locals[CALLER] = caller;
}

/** The caller `authenticate` let through. */
export function callerOf(res: Response): Caller {
  const caller = res.locals[CALLER] as Caller | undefined;
  if (!caller) throw new Error('authenticate() did not run before this route');
  return caller;
}

/** Whether two requests come from the same caller; compared in constant time, as the digests of secrets. */
export function sameCaller(a: Caller, b: Caller): boolean {
  const [left, right] = [Buffer.from(a.identity), Buffer.from(b.identity)];
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * GET `/.well-known/oauth-protected-resource` (RFC 9728): the SDK's metadata handler (GET and
 * OPTIONS, open to any origin, 405 otherwise) with this request's document, as the resource's
 * URL may come from the request. Not to be cached: a shared cache would hand one Host's answer
 * to another.
 */
export function protectedResourceMetadataRoute(options: Pick<AuthOptions, 'publicBaseUrl' | 'endpoint'>): RequestHandler {
  return (req, res, next) => {
    res.set('Cache-Control', 'no-store');
    metadataHandler(protectedResourceMetadata(`${baseUrlOf(req, options)}${options.endpoint}`))(req, res, next);
  };
}
