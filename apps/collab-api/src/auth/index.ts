export { type Authenticate, authenticateCaller } from './caller.js';
export { type LocalTokenOptions, mintLocalToken } from './mint.js';
export { type AuthSettings, authSettings, checkAuthSettings } from './settings.js';
export { bearerToken, createTokenVerifier, type TokenClaims, type TokenVerifier, type TokenVerifierOptions } from './tokens.js';
