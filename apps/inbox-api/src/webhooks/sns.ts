import { createVerify, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { ForbiddenError, UnauthorizedError, UpstreamError } from '@repo/errors';

/*
 * Amazon SNS HTTP(S) deliveries: the envelope, its signature (SignatureVersion 1: SHA1withRSA,
 * 2: SHA256withRSA, over the fields AWS lists for each message type), and the certificate it is
 * signed with, fetched only from an SNS host of AWS and cached.
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
  SignatureVersion: z.string().optional(),
  Signature: z.string().optional(),
  SigningCertURL: z.string().optional(),
});

export type SnsEnvelope = z.output<typeof snsEnvelope>;

/** `sns.<region>.amazonaws.com` (and the China partition's `.com.cn`), over https. */
const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;
const CERTIFICATE_TTL_MS = 24 * 3600 * 1000;
const MAX_CACHED_CERTIFICATES = 50;
const MAX_CERTIFICATE_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5000;

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
  /** Resolves when the envelope is signed by SNS for an accepted topic; 401 or 403 otherwise. */
  verify(envelope: SnsEnvelope): Promise<void>;
  /** Whether a SigningCertURL or SubscribeURL may be fetched: https on an SNS host of AWS. */
  isTrustedUrl(url: string): boolean;
}

export function createSnsVerifier(options: SnsVerifierOptions): SnsVerifier {
  const certificates = new Map<string, { key: X509Certificate; fetchedAt: number }>();

  const isTrustedUrl = (url: string): boolean => {
    if (options.trustedUrlPrefix && url.startsWith(options.trustedUrlPrefix)) return true;
    try {
      const parsed = new URL(url);
      return parsed.protocol === 'https:' && SNS_HOST.test(parsed.hostname) && parsed.port === '';
    } catch {
      return false;
    }
  };

  const certificate = async (url: string): Promise<X509Certificate> => {
    const cached = certificates.get(url);
    if (cached && Date.now() - cached.fetchedAt < CERTIFICATE_TTL_MS) return cached.key;
    const key = await fetchCertificate(url);
    if (certificates.size >= MAX_CACHED_CERTIFICATES) certificates.delete(certificates.keys().next().value!);
    certificates.set(url, { key, fetchedAt: Date.now() });
    return key;
  };

  return {
    isTrustedUrl,
    async verify(envelope) {
      if (!options.topicArns.includes(envelope.TopicArn)) {
        throw new ForbiddenError(`Messages of the SNS topic ${envelope.TopicArn} are not accepted`);
      }
      const algorithm = { '1': 'RSA-SHA1', '2': 'RSA-SHA256' }[envelope.SignatureVersion ?? ''];
      if (!algorithm || !envelope.Signature || !envelope.SigningCertURL) {
        throw new UnauthorizedError('The SNS message is not signed (SignatureVersion 1 or 2, Signature, SigningCertURL)');
      }
      if (!isTrustedUrl(envelope.SigningCertURL)) {
        throw new UnauthorizedError('The SNS signing certificate is not on an SNS host of AWS');
      }
      const key = await certificate(envelope.SigningCertURL);
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
