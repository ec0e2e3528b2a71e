import { createHmac } from 'node:crypto';
import { loadConfig } from '@repo/config';
import { collabErrorFormat, errorHandler, UnauthorizedError } from '@repo/errors';
import express, { type Express } from 'express';
import { z } from 'zod';
import { type AuthSettings, authSettings, checkAuthSettings, createTokenVerifier } from '../../src/auth/index.js';
import type { TokenVerifierOptions } from '../../src/auth/tokens.js';

export const KNOWN_SUB = 'idp|user-1';

/** Settings as the app would load them from these environment variables. */
export function settingsFrom(env: Record<string, string>): AuthSettings {
  return loadConfig(z.object(authSettings()).superRefine(checkAuthSettings), env);
}

/**
 * A tiny app whose one route verifies the request's token, and whose user directory knows one
 * subject. Errors go through the collab error middleware, as in the real app; `serverErrors`
 * collects what it logs as 5xx.
 */
export function protectedApp(settings: AuthSettings, options: TokenVerifierOptions = {}) {
  const serverErrors: unknown[] = [];
  const app: Express = express();
  const verifier = createTokenVerifier(settings, options);
  app.get('/me', async (req, res) => {
    const { sub, email, emailVerified, platformAdmin } = await verifier.verifyRequest(req, res);
    if (sub !== KNOWN_SUB) throw new UnauthorizedError('Unknown user');
    res.json({ user: { id: 'u1' }, sub, email, emailVerified, platformAdmin });
  });
  app.use(errorHandler({ format: collabErrorFormat, logger: { error: (fields) => serverErrors.push(fields) } }));
  return { app, serverErrors };
}

export function base64url(value: object | string): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

/** A compact JWT built by hand, as a forger would: any header, any payload, any signature. */
export function forge(header: object, payload: object, sign: (input: string) => string = () => ''): string {
  const input = `${base64url(header)}.${base64url(payload)}`;
  return `${input}.${sign(input)}`;
}

export function hmacSha256(key: string): (input: string) => string {
  return (input) => createHmac('sha256', key).update(input).digest('base64url');
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
