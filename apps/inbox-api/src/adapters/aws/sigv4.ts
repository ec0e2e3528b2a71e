import { createHash, createHmac } from 'node:crypto';

/*
 * AWS Signature Version 4, as documented in "Create a signed AWS API request" (IAM user guide),
 * for the two calls the service makes: SES SendEmail and S3 GetObject (SES's stored inbound mail).
 * Small enough to read in full, and checked against AWS's published test-suite signatures; it
 * spares the app the AWS SDK's dependency tree.
 */

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

interface SignableRequest {
  method: string;
  url: string;
  /** Headers to sign and send; `host` is taken from the URL. */
  headers: Record<string, string>;
  body: string;
}

/** The headers to send: the given ones, `x-amz-date` and `authorization`. */
export function signAwsRequest(
  request: SignableRequest,
  scope: { credentials: AwsCredentials; region: string; service: string; now?: Date },
): Record<string, string> {
  const url = new URL(request.url);
  const amzDate = (scope.now ?? new Date()).toISOString().replace(/[-:]|\.\d{3}/g, '');
  const date = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...lowerCaseKeys(request.headers), 'x-amz-date': amzDate };
  const signed: Record<string, string> = { ...headers, host: url.host };
  const names = Object.keys(signed).sort();
  const signedHeaders = names.join(';');

  const canonicalRequest = [
    request.method.toUpperCase(),
    scope.service === 's3' ? url.pathname : canonicalPath(url.pathname),
    canonicalQuery(url.searchParams),
    names.map((name) => `${name}:${signed[name]!.trim().replace(/\s+/g, ' ')}\n`).join(''),
    signedHeaders,
    sha256Hex(request.body),
  ].join('\n');
  const credentialScope = `${date}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, credentialScope, sha256Hex(canonicalRequest)].join('\n');

  let key: Buffer | string = `AWS4${scope.credentials.secretAccessKey}`;
  for (const part of [date, scope.region, scope.service, 'aws4_request']) key = hmac(key, part);
  const signature = hmac(key, stringToSign).toString('hex');

  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${scope.credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

/**
 * Each segment URI-encoded once more: services other than S3 sign the path encoded twice. S3 signs
 * it as sent, encoded once (the caller encodes each segment with uriEncode).
 */
function canonicalPath(pathname: string): string {
  return pathname.split('/').map(uriEncode).join('/') || '/';
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** RFC 3986 percent-encoding: everything but A-Z a-z 0-9 - _ . ~ */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

export function sha256Hex(data: string): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}
