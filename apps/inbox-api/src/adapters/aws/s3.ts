import { UpstreamError } from '@repo/errors';
import { type AwsCredentials, sha256Hex, signAwsRequest, uriEncode } from './sigv4.js';

export interface S3Location {
  region: string;
  credentials: AwsCredentials;
  /** An S3-compatible endpoint, addressed path-style; unset: AWS, virtual-hosted style. */
  endpoint?: string;
}

const TIMEOUT_MS = 30_000;

/**
 * S3 GetObject with a SigV4-signed request (the payload hash of an empty body, as GET has). The
 * key is used as SES wrote it, a leading slash included. An answer other than 200 is an
 * UpstreamError naming the status and S3's error code, never the credentials.
 */
export async function getS3Object(location: S3Location, object: { bucket: string; key: string }): Promise<Buffer> {
  const path = object.key.split('/').map(uriEncode).join('/');
  const url = location.endpoint
    ? `${location.endpoint.replace(/\/$/, '')}/${uriEncode(object.bucket)}/${path}`
    : `https://${object.bucket}.s3.${location.region}.amazonaws.com/${path}`;
  const headers = signAwsRequest(
    { method: 'GET', url, headers: { 'x-amz-content-sha256': sha256Hex('') }, body: '' },
    { credentials: location.credentials, region: location.region, service: 's3' },
  );
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new UpstreamError('Amazon S3 could not be reached', { details: { reason: (error as Error).message } });
  }
  if (!response.ok) {
    const code = /<Code>([^<]{1,100})<\/Code>/.exec(await response.text().catch(() => ''))?.[1];
    throw new UpstreamError(`Amazon S3 answered ${response.status}${code ? ` ${code}` : ''} for the stored mail`, {
      details: { status: response.status, bucket: object.bucket, key: object.key },
    });
  }
  return Buffer.from(await response.arrayBuffer());
}
