import { configProblems, documentSettings, loadConfig } from '@repo/config';
import { z } from 'zod';
import { authSettings, checkAuthSettings } from '../../src/auth/settings.js';

const schema = z.object(authSettings()).superRefine(checkAuthSettings);
const SECRET = 'a-shared-secret-of-32-characters';

const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

describe('auth settings', () => {
  it('read a secret configuration with its defaults', () => {
    expect(loadConfig(schema, { COLLAB_JWT_SECRET: SECRET })).toEqual({
      COLLAB_JWT_SECRET: SECRET,
      COLLAB_PLATFORM_ADMIN_CLAIM: 'platform_admin',
      COLLAB_JWT_CLOCK_TOLERANCE_SECONDS: 30,
    });
  });

  it('read a JWKS configuration', () => {
    expect(
      loadConfig(schema, {
        COLLAB_JWKS_URL: 'https://id.acme.test/.well-known/jwks.json',
        COLLAB_JWT_ISSUER: 'https://id.acme.test/',
        COLLAB_JWT_AUDIENCE: 'collab-api',
        COLLAB_JWT_ALGORITHMS: 'RS256, PS256',
      }),
    ).toMatchObject({ COLLAB_JWKS_URL: 'https://id.acme.test/.well-known/jwks.json', COLLAB_JWT_ALGORITHMS: ['RS256', 'PS256'] });
  });

  it('require exactly one of the secret and the JWKS URL', () => {
    expect(problemsOf({})).toEqual([
      "COLLAB_JWT_SECRET or COLLAB_JWKS_URL is required: a shared secret for HS256 tokens, or the identity provider's JWKS URL",
    ]);
    expect(problemsOf({ COLLAB_JWT_SECRET: SECRET, COLLAB_JWKS_URL: 'https://id.acme.test/jwks' })).toEqual([
      'COLLAB_JWKS_URL must not be set together with COLLAB_JWT_SECRET: tokens are verified one way, set only one of them (got "https://id.acme.test/jwks")',
    ]);
  });

  it('refuse a short secret without echoing it', () => {
    expect(problemsOf({ COLLAB_JWT_SECRET: 'short' })).toEqual([
      'COLLAB_JWT_SECRET must be at least 32 characters long (value hidden)',
    ]);
  });

  it('refuse algorithms of the other mode', () => {
    expect(problemsOf({ COLLAB_JWT_SECRET: SECRET, COLLAB_JWT_ALGORITHMS: 'HS256,RS256' })).toEqual([
      'COLLAB_JWT_ALGORITHMS may list only HS256, HS384, HS512 with COLLAB_JWT_SECRET, not RS256 (got "HS256,RS256")',
    ]);
    expect(problemsOf({ COLLAB_JWKS_URL: 'https://id.acme.test/jwks', COLLAB_JWT_ALGORITHMS: 'HS256,none' })).toEqual([
      'COLLAB_JWT_ALGORITHMS may list only RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512 with COLLAB_JWKS_URL, not HS256, none (got "HS256,none")',
    ]);
  });

  it('describe every variable', () => {
    const docs = documentSettings(z.object(authSettings()));
    for (const doc of docs) expect(doc.description).not.toBe('');
    expect(docs.find((doc) => doc.name === 'COLLAB_JWT_SECRET')).toMatchObject({
      expects: 'a string of at least 32 characters',
      required: false,
    });
  });
});
