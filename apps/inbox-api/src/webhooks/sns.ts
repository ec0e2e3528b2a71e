import { createVerify, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { LRUCache } from 'lru-cache';
import { ForbiddenError, UnauthorizedError, UpstreamError } from '@repo/errors';

/*
 * Amazon SNS HTTP(S) deliveries: the envelope, its signature (SignatureVersion 1: SHA1withRSA,
 * 2: SHA256withRSA, over the fields AWS lists for each message type), and the certificate it is
 * signed with, fetched only from the SNS endpoint of the topic's own region and cached. The
 * certificate must name SNS, and a message older than an hour is refused: SNS retries a delivery
 * for an hour at most, and a captured one must not be replayed forever.
 */

export const snsEnvelope = z.object({
  Type: z.enum(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']),
  MessageId: z.string(),
  TopicArn: z.string(),
  Message: z.string(),
  Timestamp: z.string(),
  Subject: z.string().optional(),
  Token: z.string().optional(),
  SubscribeURL: z.string().optional(),
  UnsubscribeURL: z.string().optional(),
  SignatureVersion: z.string().optional(),
  Signature: z.string().optional(),
  SigningCertURL: z.string().optional(),
});

export type SnsEnvelope = z.output<typeof snsEnvelope>;

/** The DNS domain of SNS endpoints in each AWS partition (an ARN's second field). */
const PARTITION_DOMAINS = new Map([
  ['aws', 'amazonaws.com'],
  ['aws-us-gov', 'amazonaws.com'],
  ['aws-cn', 'amazonaws.com.cn'],
]);
/** An AWS region name: `us-east-1`, `us-gov-west-1`, `cn-northwest-1`… (and never `s3` or `s3-us-west-2`, S3's hosts). */
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;
/** How old a message may be. */
const MAX_MESSAGE_AGE_MS = 3600 * 1000;
/** How far ahead of this server's clock a message's Timestamp may be. */
const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;
const CERTIFICATE_TTL_MS = 24 * 3600 * 1000;
const MAX_CACHED_CERTIFICATES = 50;
const MAX_CERTIFICATE_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5000;

/**
 * The SNS endpoint of the topic's region, `sns.<region>.amazonaws.com` (`.amazonaws.com.cn` in
 * China), and the partition's domain; undefined when the ARN is no SNS topic's of those partitions.
 */
export function snsEndpointOf(topicArn: string): { host: string; domain: string } | undefined {
  const [arn, partition = '', service, region = ''] = topicArn.split(':');
  const domain = PARTITION_DOMAINS.get(partition);
  if (arn !== 'arn' || service !== 'sns' || domain === undefined || !REGION.test(region)) return undefined;
  return { host: `sns.${region}.${domain}`, domain };
}

/**
 * Whether `url` is on the SNS endpoint of the topic's region: https, that very host, no port and
 * no user; a signing certificate's path ends in `.pem`. Any other URL (an S3 bucket named like SNS,
 * another region, an address) is never fetched.
 */
export function isSnsUrl(url: string, topicArn: string, kind: 'certificate' | 'link'): boolean {
  const endpoint = snsEndpointOf(topicArn);
  if (!endpoint || !URL.canParse(url)) return false;
  const parsed = new URL(url);
  return (
    parsed.protocol === 'https:' &&
    parsed.hostname === endpoint.host &&
    parsed.port === '' &&
    parsed.username === '' &&
    parsed.password === '' &&
    (kind === 'link' || parsed.pathname.endsWith('.pem'))
  );
}

/**
 * Whether the certificate names SNS (its DNS names, or its common name when it has none):
 * `sns.amazonaws.com` (what AWS's signing certificates carry), or the SNS endpoint of the topic's
 * region; `.amazonaws.com.cn` in China. Wildcards do not count.
 */
export function certificateNamesSns(certificate: X509Certificate, topicArn: string): boolean {
  const endpoint = snsEndpointOf(topicArn);
  if (!endpoint) return false;
  return [`sns.${endpoint.domain}`, endpoint.host].some(
    (name) => certificate.checkHost(name, { wildcards: false }) !== undefined,
  );
}

/** Why a message of `timestamp` is refused at `now` (older than an hour, or ahead of the clock), or undefined. */
export function timestampProblem(timestamp: string, now: Date): string | undefined {
  const time = Date.parse(timestamp);
  if (Number.isNaN(time)) return 'The SNS message has no valid Timestamp';
  if (now.getTime() - time > MAX_MESSAGE_AGE_MS) return 'The SNS message is older than one hour';
  if (time - now.getTime() > MAX_CLOCK_SKEW_MS) return 'The SNS message is dated in the future';
  return undefined;
}

/** The text AWS signs: `Name\nValue\n` for each field of the message type, in this order, absent ones left out. */
export function stringToSign(envelope: SnsEnvelope): string {
  const names =
    envelope.Type === 'Notification'
      ? (['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const)
      : (['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const);
  return names
    .filter((name) => envelope[name] !== undefined)
    .map((name) => `${name}\n${envelope[name]}\n`)
    .join('');
}

export interface SnsVerifierOptions {
  /** Topics whose messages are accepted; the others are refused (403). */
  topicArns: string[];
  /**
   * Tests only (TEST_SNS_URL_PREFIX): URLs starting with this prefix are trusted like an SNS
   * host of AWS, so that a test can serve a certificate and a SubscribeURL on 127.0.0.1.
   */
  trustedUrlPrefix?: string;
}

export interface SnsVerifier {
  /**
   * Resolves when the envelope is signed by SNS for an accepted topic, with a certificate of the
   * topic's SNS endpoint that names SNS, and is at most an hour old; 401 or 403 otherwise.
   */
  verify(envelope: SnsEnvelope, now?: Date): Promise<void>;
  /** Whether a SigningCertURL, SubscribeURL or UnsubscribeURL may be fetched: isSnsUrl, or the tests' prefix. */
  isTrustedUrl(url: string, topicArn: string, kind: 'certificate' | 'link'): boolean;
}

export function createSnsVerifier(options: SnsVerifierOptions): SnsVerifier {
  const certificates = new LRUCache<string, X509Certificate>({ max: MAX_CACHED_CERTIFICATES, ttl: CERTIFICATE_TTL_MS });

  const isTrustedUrl = (url: string, topicArn: string, kind: 'certificate' | 'link'): boolean =>
    (options.trustedUrlPrefix !== undefined && url.startsWith(options.trustedUrlPrefix)) || isSnsUrl(url, topicArn, kind);

  const certificate = async (url: string, topicArn: string): Promise<X509Certificate> => {
    const cached = certificates.get(url);
    if (cached) return cached;
    const key = await fetchCertificate(url);
    if (!certificateNamesSns(key, topicArn)) {
      throw new UnauthorizedError('The SNS signing certificate does not name Amazon SNS');
    }
    certificates.set(url, key);
    return key;
  };

  return {
    isTrustedUrl,
    async verify(envelope, now = new Date()) {
      if (!options.topicArns.includes(envelope.TopicArn)) {
        throw new ForbiddenError(`Messages of the SNS topic ${envelope.TopicArn} are not accepted`);
      }
      const algorithm = { '1': 'RSA-SHA1', '2': 'RSA-SHA256' }[envelope.SignatureVersion ?? ''];
      if (!algorithm || !envelope.Signature || !envelope.SigningCertURL) {
        throw new UnauthorizedError('The SNS message is not signed (SignatureVersion 1 or 2, Signature, SigningCertURL)');
      }
      if (!isTrustedUrl(envelope.SigningCertURL, envelope.TopicArn, 'certificate')) {
        throw new UnauthorizedError("The SNS signing certificate is not on the SNS endpoint of the topic's region");
      }
      if (envelope.UnsubscribeURL !== undefined && !isTrustedUrl(envelope.UnsubscribeURL, envelope.TopicArn, 'link')) {
        throw new UnauthorizedError("The SNS UnsubscribeURL is not on the SNS endpoint of the topic's region");
      }
      const stale = timestampProblem(envelope.Timestamp, now);
      if (stale) throw new UnauthorizedError(stale);
      const key = await certificate(envelope.SigningCertURL, envelope.TopicArn);
      const verifier = createVerify(algorithm);
      verifier.update(stringToSign(envelope), 'utf8');
      if (!verifier.verify(key.publicKey, envelope.Signature, 'base64')) {
        throw new UnauthorizedError('The SNS signature does not match');
      }
    },
  };
}

async function fetchCertificate(url: string): Promise<X509Certificate> {
  let pem: string;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
    if (!response.ok) throw new Error(`status ${response.status}`);
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > MAX_CERTIFICATE_BYTES) throw new Error('certificate too large');
    pem = body.toString('utf8');
  } catch (error) {
    throw new UpstreamError('The SNS signing certificate could not be fetched', {
      details: { reason: (error as Error).message },
    });
  }
  try {
    return new X509Certificate(pem);
  } catch {
    throw new UnauthorizedError('The SNS signing certificate is not a certificate');
  }
}
