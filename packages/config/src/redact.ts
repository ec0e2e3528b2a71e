// Query parameters that carry credentials: signed-URL tokens, internal tokens, webhook secrets.
const SECRET_PARAMS = /^(token|internal_token|signature|sig|key|api_key|access_token|password)$/i;
// `scheme://user:password@`, wherever a URL sits in the text.
const USERINFO_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^@\s/]*@/gi;

/**
 * A URL fit for logs and error messages: the password of `scheme://user:password@host` and the
 * values of credential-bearing query parameters (`?token=`, `?signature=`, ...) are masked. Takes
 * absolute URLs, request paths with a query, and text that holds a URL (a configuration value).
 */
export function redactUrl(url: string): string {
  const text = url.replace(USERINFO_PASSWORD, '$1***@');
  const queryStart = text.indexOf('?');
  if (queryStart === -1) return text;
  const params = new URLSearchParams(text.slice(queryStart + 1));
  if (![...params.keys()].some((key) => SECRET_PARAMS.test(key))) return text;
  for (const key of new Set(params.keys())) if (SECRET_PARAMS.test(key)) params.set(key, '[redacted]');
  return `${text.slice(0, queryStart)}?${params.toString()}`;
}
