import { BadRequestError, PayloadTooLargeError, UpstreamError } from '@repo/errors';
import { type AwsCredentials, sha256Hex, signAwsRequest, uriEncode } from './sigv4.js';

export interface S3Location {
  region: string;
  credentials: AwsCredentials;
  /** An S3-compatible endpoint, addressed path-style; unset: AWS, virtual-hosted style. */
  endpoint?: string;
}

const TIMEOUT_MS = 30_000;
/** Bucket names S3 reserves for its own features. */
const RESERVED_PREFIXES = ['xn--', 'sthree-', 'amzn-s3-demo-'];
const RESERVED_SUFFIXES = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'];

/**
 * S3's rules for general purpose bucket names (Amazon S3 user guide, "Bucket naming rules"): 3 to
 * 63 lower-case letters, digits, dots and hyphens, a letter or digit at each end, no two dots in a
 * row, not an IP address, none of the reserved prefixes and suffixes. Nothing else can be part of
 * a host name here: `127.0.0.1:41011/steal?` is no bucket.
 */
export function isBucketName(name: string): boolean {
  return (
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) &&
    !name.includes('..') &&
    !/^\d{1,3}(?:\.\d{1,3}){3}$/.test(name) &&
    !RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix)) &&
    !RESERVED_SUFFIXES.some((suffix) => name.endsWith(suffix))
  );
}

/**
 * An object key as S3 takes it (1 to 1,024 bytes of UTF-8) and as a URL path carries it
 * unchanged: no control characters, and no `.` or `..` segment, which a URL resolves away (the
 * request would name another object, or another bucket on a path-style endpoint).
 */
export function isObjectKey(key: string): boolean {
  const bytes = Buffer.byteLength(key);
  return (
    bytes >= 1 &&
    bytes <= 1024 &&
    key.isWellFormed() &&
    !/\p{Cc}/u.test(key) &&
    !key.split('/').some((segment) => segment === '.' || segment === '..')
  );
}

/**
 * The object's URL: the bucket in the host (virtual-hosted style) on AWS, in the path on an
 * S3-compatible endpoint and for a bucket with dots (which AWS's wildcard certificate does not
 * cover); the key always in the path, each segment URI-encoded.
 */
export function s3ObjectUrl(location: Pick<S3Location, 'region' | 'endpoint'>, object: { bucket: string; key: string }): string {
  const path = object.key.split('/').map(uriEncode).join('/');
  if (location.endpoint) return `${location.endpoint.replace(/\/$/, '')}/${object.bucket}/${path}`;
  return object.bucket.includes('.')
    ? `https://s3.${location.region}.amazonaws.com/${object.bucket}/${path}`
    : `https://${object.bucket}.s3.${location.region}.amazonaws.com/${path}`;
}

/** 400 for a bucket or key S3 would not take (nothing is sent for it, whatever S3 is configured). */
export function assertS3Object(object: { bucket: string; key: string }): void {
  if (!isBucketName(object.bucket) || !isObjectKey(object.key)) {
    throw new BadRequestError('The S3 location is not a bucket name and object key S3 takes', {
      bucket: object.bucket,
      key: object.key,
    });
  }
}

/**
 * S3 GetObject with a SigV4-signed request (the payload hash of an empty body, as GET has). The
 * key is used as SES wrote it, a leading slash included. A bucket or key S3 would not take is
 * refused (400) before anything is sent; an object over `maxBytes` (declared, or as it streams)
 * is refused (413) without holding more of it. An answer other than 200 is an UpstreamError naming
 * the status and S3's error code, never the credentials.
 */
export async function getS3Object(
  location: S3Location,
  object: { bucket: string; key: string },
  options: { maxBytes: number },
): Promise<Buffer> {
  assertS3Object(object);
  const url = s3ObjectUrl(location, object);
  const headers = signAwsRequest(
    { method: 'GET', url, headers: { 'x-amz-content-sha256': sha256Hex('') }, body: '' },
    { credentials: location.credentials, region: location.region, service: 's3' },
  );
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
  } catch (error) {
    throw new UpstreamError('Amazon S3 could not be reached', { details: { reason: (error as Error).message } });
  }
  if (!response.ok) {
    const code = /<Code>([^<]{1,100})<\/Code>/.exec(await response.text().catch(() => ''))?.[1];
    throw new UpstreamError(`Amazon S3 answered ${response.status}${code ? ` ${code}` : ''} for the stored mail`, {
      details: { status: response.status, bucket: object.bucket, key: object.key },
    });
  }
  const tooLarge = () =>
    new PayloadTooLargeError(`The stored mail is larger than the limit of ${options.maxBytes} bytes`, {
      limit_bytes: options.maxBytes,
    });
  if (Number(response.headers.get('content-length')) > options.maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    for await (const chunk of (response.body ?? []) as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      if (bytes > options.maxBytes) throw tooLarge();
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw error;
    throw new UpstreamError('Amazon S3 stopped sending the stored mail', { details: { reason: (error as Error).message } });
  }
  return Buffer.concat(chunks, bytes);
}
