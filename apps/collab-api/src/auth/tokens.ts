/**
 * Verification of the bearer tokens of API requests with passport-jwt: HS256 with a shared
 * secret, or RS256/ES256 with keys from the identity provider's JWKS.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ServiceUnavailableError, UnauthorizedError } from '@repo/errors';
import type { Request, Response } from 'express';
import { createRemoteJWKSet, decodeProtectedHeader } from 'jose';
import type { Algorithm, JwtPayload } from 'jsonwebtoken';
import passport from 'passport';
import { type SecretOrKeyProvider, Strategy as JwtStrategy } from 'passport-jwt';
import { type AuthSettings, DEFAULT_JWKS_ALGORITHMS, DEFAULT_SECRET_ALGORITHMS } from './settings.js';

/** What the app learns from a verified token. */
export interface TokenClaims {
  /** The user's identity_provider_id. */
  sub: string;
  email?: string;
  /** `email_verified` is boolean true: the e-mail may link an invited user to this `sub`. */
  emailVerified: boolean;
  /** The configured platform-operator claim (COLLAB_PLATFORM_ADMIN_CLAIM) is boolean true. */
  platformAdmin: boolean;
  raw: JwtPayload;
}

export interface TokenVerifierOptions {
  /** How long a JWKS fetch may take before the token is refused (default 5 s). */
  jwksTimeoutMs?: number;
  /**
   * Least time between JWKS fetches: a token with an unknown key id refetches the set (key
   * rotation) at most this often after a successful fetch (default 30 s).
   */
  jwksCooldownMs?: number;
}

export interface TokenVerifier {
  /**
   * The claims of the request's bearer token, or an UnauthorizedError that says shortly why not;
   * a ServiceUnavailableError when the identity provider's keys cannot be fetched.
   */
  verifyRequest(req: Request, res: Response): Promise<TokenClaims>;
}

const STRATEGY = 'jwt';
// A JWT in compact form; real tokens are well under this length.
const MAX_TOKEN_LENGTH = 8192;
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/i;

/**
 * The token of an `Authorization: Bearer <token>` header; null when there is none, or when the
 * header is anything else (another scheme, no token, two tokens, not a compact JWT, too long).
 */
export function bearerToken(headers: IncomingHttpHeaders): string | null {
  const value = headers.authorization;
  if (value === undefined || value.length > MAX_TOKEN_LENGTH + 'Bearer '.length) return null;
  return BEARER.exec(value)?.[1] ?? null;
}

/**
 * Builds the verifier for the configured mode. Algorithms are pinned per mode (HS* for the
 * secret, asymmetric ones for the JWKS), so `alg: none` and a token HMAC-signed with a public key
 * are refused; issuer and audience are checked when configured, and a token must carry `sub` and
 * `exp`.
 */
export function createTokenVerifier(settings: AuthSettings, options: TokenVerifierOptions = {}): TokenVerifier {
  const jwksUrl = settings.COLLAB_JWKS_URL;
  // checkAuthSettings has checked the names against the mode's list.
  const algorithms = (settings.COLLAB_JWT_ALGORITHMS ??
    (jwksUrl ? DEFAULT_JWKS_ALGORITHMS : DEFAULT_SECRET_ALGORITHMS)) as Algorithm[];
  const key = jwksUrl
    ? { secretOrKeyProvider: jwksKeyProvider(jwksUrl, algorithms, options) }
    : { secretOrKey: secretKey(requiredSecret(settings)) };
  const strategy = new JwtStrategy(
    {
      ...key,
      jwtFromRequest: (req: Request) => bearerToken(req.headers),
      algorithms,
      issuer: settings.COLLAB_JWT_ISSUER,
      audience: settings.COLLAB_JWT_AUDIENCE,
      // passport-jwt has no option of its own for the tolerance; this one goes to jsonwebtoken.
      jsonWebTokenOptions: { clockTolerance: settings.COLLAB_JWT_CLOCK_TOLERANCE_SECONDS },
    },
    (payload: JwtPayload, done: (error: unknown, claims?: TokenClaims | false, info?: unknown) => void) => {
      const claims = claimsOf(payload, settings.COLLAB_PLATFORM_ADMIN_CLAIM);
      if (claims) done(null, claims);
      else done(null, false, new Error('The token has no sub or no exp claim'));
    },
  );
  // Registered by name, so that each request runs on its own copy of the strategy: passport
  // binds a request's callbacks to the strategy object, and a shared instance would mix up
  // requests whose key lookups overlap.
  const authenticator = new passport.Authenticator();
  authenticator.use(STRATEGY, strategy);

  return {
    verifyRequest(req, res) {
      return new Promise((resolve, reject) => {
        const callback = (error: Error | null, claims: TokenClaims | false, info: unknown) => {
          if (error) reject(error);
          else if (claims) resolve(claims);
          // passport-jwt reports a failed key lookup as a failed token; an outage is ours, not the caller's.
          else if (info instanceof ServiceUnavailableError) reject(info);
          else reject(new UnauthorizedError(failureMessage(req.headers, info)));
        };
        const run = authenticator.authenticate(STRATEGY, { session: false }, callback) as (
          req: Request,
          res: Response,
          next: () => void,
        ) => void;
        // passport calls `next` only for a strategy that passes the request on; passport-jwt never does.
        run(req, res, () => reject(new UnauthorizedError('Invalid token')));
      });
    },
  };
}

function requiredSecret(settings: AuthSettings): string {
  if (settings.COLLAB_JWT_SECRET === undefined) throw new TypeError('Set COLLAB_JWT_SECRET or COLLAB_JWKS_URL');
  return settings.COLLAB_JWT_SECRET;
}

/**
 * The secret as the HMAC key jsonwebtoken would make of it on every request, after first trying
 * to read it as a PEM public key (an exception each time). passport-jwt hands it to jsonwebtoken
 * as it is; its types know only strings and Buffers.
 */
function secretKey(secret: string): Buffer {
  return createSecretKey(Buffer.from(secret)) as unknown as Buffer;
}

/**
 * Keys from the identity provider's JWKS, by the token's `kid`. jose caches the set, refetches
 * it when a `kid` is unknown (no more often than the cooldown allows) and bounds each fetch by a
 * timeout, so a JWKS endpoint that is down or hangs answers 503 (and is logged), not a hang, and
 * not a 401 that would send clients to sign in again for nothing.
 */
function jwksKeyProvider(url: string, algorithms: string[], options: TokenVerifierOptions): SecretOrKeyProvider {
  const keys = createRemoteJWKSet<KeyObject>(new URL(url), {
    timeoutDuration: options.jwksTimeoutMs ?? 5_000,
    cooldownDuration: options.jwksCooldownMs ?? 30_000,
  });
  return (_req, rawToken: string, done) => {
    let header;
    try {
      header = decodeProtectedHeader(rawToken);
    } catch (error) {
      done(error);
      return;
    }
    // Checked before any key is looked up, so a forged header cannot make us fetch the JWKS.
    if (header.alg === undefined || !algorithms.includes(header.alg)) {
      done(new Error(`Algorithm ${String(header.alg)} is not accepted`));
      return;
    }
    keys(header).then(
      // The KeyObject itself, which jsonwebtoken takes as it is (a PEM would be parsed again on every request).
      (key) => done(null, key as unknown as string),
      (error: unknown) => done(isKeyMismatch(error) ? error : jwksUnavailable(error)),
    );
  };
}

/** The token names a key the set does not have (or has twice): the token's fault, a 401. */
function isKeyMismatch(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS';
}

function jwksUnavailable(cause: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError("The identity provider's signing keys could not be fetched; try again shortly", {
    cause,
    headers: { 'Retry-After': '5' },
  });
}

function claimsOf(payload: JwtPayload, platformAdminClaim: string): TokenClaims | undefined {
  // Without exp a token would be valid forever; identity providers always set it. A NUL cannot be
  // stored (nor looked up) in Postgres text: no user has such a sub.
  if (typeof payload.sub !== 'string' || !/^[^\0]+$/.test(payload.sub) || typeof payload.exp !== 'number') return undefined;
  return {
    sub: payload.sub,
    ...(typeof payload.email === 'string' && isLinkableEmail(payload.email) ? { email: payload.email } : {}),
    emailVerified: payload.email_verified === true,
    platformAdmin: payload[platformAdminClaim] === true,
    raw: payload,
  };
}

/**
 * Whether a token's e-mail may be matched against users' e-mails: printable ASCII, as every stored
 * address is (`email`, shared/schemas.ts). Anything else is left out of the claims: lower-cased in full
 * Unicode, U+212A KELVIN SIGN becomes `k`, and `\u212Aate@example.com` would link Kate's invitation.
 */
function isLinkableEmail(email: string): boolean {
  return /^[!-~]+$/.test(email);
}

/** Says what is wrong without saying what would have been right (issuer, audience, keys). */
function failureMessage(headers: IncomingHttpHeaders, info: unknown): string {
  if (headers.authorization === undefined) return 'Authentication required';
  if (bearerToken(headers) === null) return 'Expected an Authorization header of the form "Bearer <token>"';
  // By name: the error classes may come from another copy of jsonwebtoken than ours.
  const name = typeof info === 'object' && info !== null ? (info as { name?: unknown }).name : undefined;
  if (name === 'TokenExpiredError') return 'Token expired';
  if (name === 'NotBeforeError') return 'Token not yet valid';
  return 'Invalid token';
}
