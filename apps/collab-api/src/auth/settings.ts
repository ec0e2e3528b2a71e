import { setting } from '@repo/config';
import type { z } from 'zod';

/** The algorithms each verification mode may accept, and those it accepts unless configured. */
const SECRET_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'] as const;
export const DEFAULT_SECRET_ALGORITHMS = ['HS256'] as const;
export const DEFAULT_JWKS_ALGORITHMS = ['RS256', 'ES256'] as const;

export const DEFAULT_PLATFORM_ADMIN_CLAIM = 'platform_admin';

const MIN_SECRET_LENGTH = 32;

/**
 * Token verification's environment variables, to spread into the app's configuration schema,
 * whose `superRefine` calls checkAuthSettings.
 */
export function authSettings() {
  return {
    COLLAB_JWT_SECRET: setting
      .string()
      .refine((secret) => secret.length >= MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters long`)
      .meta({ expects: `a string of at least ${MIN_SECRET_LENGTH} characters` })
      .optional()
      .describe(
        'Shared secret of HS256 tokens: local use, tests and the `cli token` command. Set this or COLLAB_JWKS_URL, not both.',
      ),
    COLLAB_JWKS_URL: setting
      .url()
      .optional()
      .describe(
        'JWKS URL of the identity provider whose RS256/ES256 tokens are accepted. Set this or COLLAB_JWT_SECRET, not both.',
      ),
    COLLAB_JWT_ISSUER: setting.string().optional().describe('Required `iss` claim of tokens. Unset: not checked.'),
    COLLAB_JWT_AUDIENCE: setting.string().optional().describe('Required `aud` claim of tokens. Unset: not checked.'),
    COLLAB_JWT_ALGORITHMS: setting
      .list()
      .optional()
      .describe(
        `Signature algorithms accepted. Default: ${DEFAULT_SECRET_ALGORITHMS.join(',')} with COLLAB_JWT_SECRET, ${DEFAULT_JWKS_ALGORITHMS.join(',')} with COLLAB_JWKS_URL.`,
      ),
    COLLAB_PLATFORM_ADMIN_CLAIM: setting
      .string()
      .default(DEFAULT_PLATFORM_ADMIN_CLAIM)
      .describe('Claim that makes a token a platform operator (create, list and delete tenants) when it is boolean true.'),
    COLLAB_JWT_CLOCK_TOLERANCE_SECONDS: setting
      .integer({ min: 0, max: 300 })
      .default(30)
      .describe('Clock difference allowed when checking the `exp` and `nbf` claims of tokens.'),
  };
}

export type AuthSettings = z.output<z.ZodObject<ReturnType<typeof authSettings>>>;

/**
 * Checks that involve more than one variable; each issue names the variables concerned.
 * `secretGenerated`: the service makes its own secret at start (local development), so neither
 * COLLAB_JWT_SECRET nor COLLAB_JWKS_URL is required.
 */
export function checkAuthSettings(
  settings: AuthSettings,
  ctx: z.RefinementCtx,
  { secretGenerated = false }: { secretGenerated?: boolean } = {},
): void {
  const { COLLAB_JWT_SECRET: secret, COLLAB_JWKS_URL: jwksUrl, COLLAB_JWT_ALGORITHMS: algorithms } = settings;
  if (!secretGenerated && secret === undefined && jwksUrl === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['COLLAB_JWT_SECRET'],
      message: "or COLLAB_JWKS_URL is required: a shared secret for HS256 tokens, or the identity provider's JWKS URL",
    });
  }
  if (secret !== undefined && jwksUrl !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['COLLAB_JWKS_URL'],
      message: 'must not be set together with COLLAB_JWT_SECRET: tokens are verified one way, set only one of them',
    });
  }
  const allowed: readonly string[] = jwksUrl === undefined ? SECRET_ALGORITHMS : JWKS_ALGORITHMS;
  const refused = algorithms?.filter((algorithm) => !allowed.includes(algorithm)) ?? [];
  if (refused.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['COLLAB_JWT_ALGORITHMS'],
      message: `may list only ${allowed.join(', ')} with ${jwksUrl === undefined ? 'COLLAB_JWT_SECRET' : 'COLLAB_JWKS_URL'}, not ${refused.join(', ')}`,
    });
  }
}
