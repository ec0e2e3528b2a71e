import PostalMime from 'postal-mime';
import { UpstreamError } from '@repo/errors';
import { SesTransport } from '../../src/adapters/mail/ses.js';
import { signAwsRequest } from '../../src/adapters/aws/sigv4.js';
import { ALL_BYTES, closedPort, type ReceivedRequest, replyMail, startProvider } from './helpers.js';

const REGION = 'eu-west-1';
const CREDENTIALS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const SES_ID = '0102018e1f2a3b4c-5d6e7f80-9a0b-4c1d-8e2f-3a4b5c6d7e8f-000000';
const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/(\d{8})\/eu-west-1\/ses\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/;

/** What SES checks before anything else: the shape of the signature, its moment, and the signature itself. */
function signatureProblem(request: ReceivedRequest): string | undefined {
  const amzDate = String(request.headers['x-amz-date']);
  const match = AUTHORIZATION.exec(String(request.headers.authorization));
  if (!match || !/^\d{8}T\d{6}Z$/.test(amzDate) || match[1] !== amzDate.slice(0, 8)) return 'malformed authorization';
  const signedAt = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (Math.abs(signedAt.getTime() - Date.now()) > 5 * 60_000) return 'signature expired';
  // Recomputed from the request as it arrived, with the secret only the two sides know.
  const expected = signAwsRequest(
    {
      method: request.method,
      url: `http://${request.headers.host}${request.path}`,
      headers: { 'content-type': String(request.headers['content-type']) },
      body: request.body.toString(),
    },
    { credentials: CREDENTIALS, region: REGION, service: 'ses', now: signedAt },
  );
  return expected.authorization === request.headers.authorization ? undefined : 'signature mismatch';
}

async function startSes() {
  return startProvider((request) => {
    if (signatureProblem(request)) {
      return {
        status: 403,
        headers: { 'x-amzn-errortype': 'SignatureDoesNotMatchException' },
        body: { message: 'The request signature we calculated does not match the signature you provided.' },
      };
    }
    return { status: 200, body: { MessageId: SES_ID } };
  });
}

describe('SesTransport', () => {
  it('sends our MIME through SendEmail v2, signed with SigV4, and answers the Message-ID SES gives it', async () => {
    const ses = await startSes();
    const transport = new SesTransport({ region: REGION, credentials: CREDENTIALS, endpoint: ses.url, timeoutMs: 5_000 });
    const sent = await transport.send(replyMail());
    await ses.close();

    expect(sent).toEqual({ messageId: `<${SES_ID}@eu-west-1.amazonses.com>`, transportMessageId: SES_ID });
    const [request] = ses.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v2/email/outbound-emails' });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(signatureProblem(request!)).toBeUndefined();

    const body = JSON.parse(request!.body.toString());
    expect(Object.keys(body).sort()).toEqual(['Content', 'Destination']);
    expect(body.Destination).toEqual({
      ToAddresses: ['zoe@example.org', 'bob@example.net'],
      CcAddresses: ['carol@example.com'],
      BccAddresses: ['audit@example.com'],
    });
    expect(Object.keys(body.Content)).toEqual(['Raw']);
    const email = await PostalMime.parse(Buffer.from(body.Content.Raw.Data, 'base64'));
    expect(email.subject).toBe('Re: Angebot für März ✓');
    expect(email.messageId).toBe('<msg-2@inbox.example.com>');
    expect(email.inReplyTo).toBe('<orig-1@example.org>');
    expect(email.references).toBe('<root-0@example.org> <orig-1@example.org>');
    expect(email.bcc).toBeUndefined();
    expect(Buffer.from(email.attachments[0]!.content as ArrayBuffer)).toEqual(ALL_BYTES);
  });

  it('names us-east-1 Message-IDs after email.amazonses.com', async () => {
    const ses = await startProvider(() => ({ status: 200, body: { MessageId: SES_ID } }));
    const transport = new SesTransport({ region: 'us-east-1', credentials: CREDENTIALS, endpoint: ses.url, timeoutMs: 5_000 });
    expect(await transport.send(replyMail())).toEqual({
      messageId: `<${SES_ID}@email.amazonses.com>`,
      transportMessageId: SES_ID,
    });
    await ses.close();
  });

  it('reports a wrong secret as the signature error SES answers', async () => {
    const ses = await startSes();
    const credentials = { ...CREDENTIALS, secretAccessKey: 'not-the-secret' };
    const transport = new SesTransport({ region: REGION, credentials, endpoint: ses.url, timeoutMs: 5_000 });
    const failure = await transport.send(replyMail()).catch((error: unknown) => error);
    await ses.close();

    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({
      code: 'provider_error',
      message:
        'Amazon SES answered 403: SignatureDoesNotMatchException: The request signature we calculated does not match the signature you provided.',
      details: { provider: 'Amazon SES', status: 403 },
    });
    expect((failure as Error).message).not.toContain('not-the-secret');
  });

  it.each([
    [
      400,
      'MessageRejected:http://internal.amazon.com/coral/com.amazonaws.sesv2/',
      'Email address is not verified. The following identities failed the check in region EU-WEST-1: agent@inbox.example.com',
    ],
    [429, 'TooManyRequestsException', 'Maximum sending rate exceeded.'],
    [500, 'InternalFailure', 'An internal failure occurred.'],
  ])('turns a %i answer into provider_error with the error type and message', async (status, type, message) => {
    const ses = await startProvider(() => ({ status, headers: { 'x-amzn-errortype': type }, body: { message } }));
    const transport = new SesTransport({ region: REGION, credentials: CREDENTIALS, endpoint: ses.url, timeoutMs: 5_000 });
    await expect(transport.send(replyMail())).rejects.toMatchObject({
      code: 'provider_error',
      message: `Amazon SES answered ${status}: ${type.split(':')[0]}: ${message}`,
    });
    await ses.close();
  });

  it('reports a refused connection', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const transport = new SesTransport({ region: REGION, credentials: CREDENTIALS, endpoint, timeoutMs: 5_000 });
    await expect(transport.send(replyMail())).rejects.toMatchObject({
      code: 'provider_error',
      message: 'Amazon SES could not be reached: ECONNREFUSED',
    });
  });
});
