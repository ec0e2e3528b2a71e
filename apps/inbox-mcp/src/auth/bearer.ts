/**
 * Bearer tokens as RFC 6750 and the MCP authorization specification use them: what an
 * Authorization header presents, the challenge a 401 carries, and the protected-resource metadata
 * (RFC 9728) the challenge points to. The tokens are inbox-api's API keys. Pure functions.
 */
import { createHash } from 'node:crypto';
import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

/** Where the protected-resource metadata is served (RFC 9728, section 3), at the root of the server. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

export type Credentials =
  /** No Authorization header (or an empty one). */
  | { kind: 'none' }
  /** Another scheme than Bearer (Basic, ...). */
  | { kind: 'unsupported' }
  /** Bearer, but not followed by exactly one token of visible ASCII characters. */
  | { kind: 'malformed' }
  | { kind: 'bearer'; token: string };

/**
 * What an Authorization header presents. The scheme is case-insensitive (RFC 9110). The token is
 * any run of visible ASCII characters, wider than RFC 6750's b64token, so that an operator key of
 * INBOX_API_KEYS with other punctuation still passes; inbox-api is the judge of the rest.
 */
export function credentialsOf(header: string | undefined): Credentials {
  const value = header?.trim() ?? '';
  if (value === '') return { kind: 'none' };
  const [scheme = '', ...rest] = value.split(/ +/);
  if (scheme.toLowerCase() !== 'bearer') return { kind: 'unsupported' };
  const [token] = rest;
  return rest.length === 1 && token !== undefined && /^[\x21-\x7e]+$/.test(token)
    ? { kind: 'bearer', token }
    : { kind: 'malformed' };
}

/**
 * The WWW-Authenticate value of a 401. Without an error for a request that presented no bearer
 * token (RFC 6750, section 3.1: the client may not have known that it needs one); with
 * `invalid_token` and a description for a token that was refused. The description must be plain
 * ASCII without quotes or backslashes (RFC 6750's error_description syntax).
 */
export function bearerChallenge(metadataUrl: string, refused?: { description: string }): string {
  const params = [`resource_metadata="${metadataUrl}"`];
  if (refused) params.push('error="invalid_token"', `error_description="${refused.description}"`);
  return `Bearer ${params.join(', ')}`;
}

/**
 * The protected-resource metadata of the MCP endpoint `resource`. No `authorization_servers`:
 * the tokens are inbox-api's API keys, which no OAuth authorization server issues (README, "Auth").
 * No `scopes_supported` either: a key's permissions are set on the key in inbox-api, not
 * requested as scopes.
 */
export function protectedResourceMetadata(resource: string): OAuthProtectedResourceMetadata {
  return { resource, bearer_methods_supported: ['header'], resource_name: 'inbox-mcp' };
}

// A DNS name or an IPv4 address, or an IPv6 address in brackets; a port after either.
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The base URL clients reach this server at: PUBLIC_BASE_URL when configured, otherwise built
 * from the request's protocol and host (which Express takes from X-Forwarded-Proto and
 * X-Forwarded-Host within TRUST_PROXY_HOPS). undefined for a host that is no host name, which
 * would otherwise end up inside the quoted challenge.
 */
export function publicBaseUrl(configured: string | undefined, request: { protocol: string; host: string | undefined }) {
  if (configured !== undefined) return configured;
  if (request.host === undefined || !HOST.test(request.host)) return undefined;
  // undefined too for a port past 65535, which the pattern lets through.
  return URL.parse(`${request.protocol === 'https' ? 'https' : 'http'}://${request.host}`)?.origin;
}

/** How a key is known in memory and compared: its SHA-256, never the key itself. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
