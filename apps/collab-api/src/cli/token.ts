import { mintLocalToken } from '../auth/mint.js';
import type { Config } from '../config.js';
import { resolveAuthSettings } from '../local-secret.js';
import { defaultDataDir } from '../paths.js';

/** Why `cli token` refuses to run; the CLI prints it and exits with 1. */
export class TokenRefused extends Error {}

/**
 * `cli token`: a token the server accepts, signed with COLLAB_JWT_SECRET (or the development
 * secret under DATA_DIR), with the configured issuer, audience and platform-operator claim.
 */
export async function token(
  config: Config,
  input: { sub: string; email?: string; platformAdmin: boolean; ttlSeconds?: number },
): Promise<string> {
  if (config.COLLAB_JWKS_URL) {
    throw new TokenRefused(
      "cli token mints HS256 tokens for local use, but COLLAB_JWKS_URL is set: this service accepts only the identity provider's tokens.",
    );
  }
  const auth = await resolveAuthSettings(config, config.DATA_DIR ?? defaultDataDir);
  if (!auth.COLLAB_JWT_SECRET) throw new TokenRefused('COLLAB_JWT_SECRET is not set.');
  return mintLocalToken({
    secret: auth.COLLAB_JWT_SECRET,
    sub: input.sub,
    email: input.email,
    platformAdmin: input.platformAdmin,
    platformAdminClaim: config.COLLAB_PLATFORM_ADMIN_CLAIM,
    ttlSeconds: input.ttlSeconds,
    issuer: config.COLLAB_JWT_ISSUER,
    audience: config.COLLAB_JWT_AUDIENCE,
  });
}
