import jwt from 'jsonwebtoken';
import { DEFAULT_PLATFORM_ADMIN_CLAIM } from './settings.js';

export interface LocalTokenOptions {
  /** COLLAB_JWT_SECRET. */
  secret: string;
  sub: string;
  /** Marked verified (unless `emailVerified` is false), so it can link an invited user. */
  email?: string;
  emailVerified?: boolean;
  platformAdmin?: boolean;
  /** COLLAB_PLATFORM_ADMIN_CLAIM when it is not the default. */
  platformAdminClaim?: string;
  /** Default one hour. */
  ttlSeconds?: number;
  issuer?: string;
  audience?: string;
}

/** An HS256 token as the secret mode of the verifier accepts it, for the CLI and tests. */
export function mintLocalToken(options: LocalTokenOptions): string {
  const payload: Record<string, unknown> = {};
  if (options.email !== undefined) {
    payload.email = options.email;
    payload.email_verified = options.emailVerified ?? true;
  }
  if (options.platformAdmin) payload[options.platformAdminClaim ?? DEFAULT_PLATFORM_ADMIN_CLAIM] = true;
  return jwt.sign(payload, options.secret, {
    algorithm: 'HS256',
    subject: options.sub,
    expiresIn: options.ttlSeconds ?? 3600,
    ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
    ...(options.audience !== undefined ? { audience: options.audience } : {}),
  });
}
