import { UpstreamError } from '@repo/errors';

const REASON_LENGTH = 500;

/**
 * Calls a provider's HTTP API (mail, language model) with a timeout (POST unless `method` says otherwise). Anything
 * but a 2xx answer, and any network failure, becomes an UpstreamError (`provider_error`) that
 * carries the provider's reason: its status and error message. Request headers (credentials)
 * never appear in it.
 */
export async function callProvider(
  provider: string,
  url: string,
  request: { method?: 'GET' | 'POST'; headers: Record<string, string>; body?: string | FormData; timeoutMs: number },
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method ?? 'POST',
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    throw new UpstreamError(`${provider} could not be reached: ${networkReason(error, request.timeoutMs)}`, {
      code: 'provider_error',
      details: { provider },
      cause: error,
    });
  }
  if (response.ok) return response;
  const reason = await errorReason(response);
  throw new UpstreamError(`${provider} answered ${response.status}: ${reason}`, {
    code: 'provider_error',
    details: { provider, status: response.status },
  });
}

function networkReason(error: unknown, timeoutMs: number): string {
  // Duck-typed: fetch's errors come from Node's realm, which jest's sandbox does not share.
  const failure = error as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (failure?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  return failure?.cause?.code ?? failure?.cause?.message ?? failure?.message ?? String(error);
}

/**
 * The provider's own words for a failure: the messages of a JSON error body (`errors[].message`
 * of SendGrid, `message` of Mailgun and AWS, with AWS's error type header, `error.message` of the
 * language-model APIs), else the text.
 */
async function errorReason(response: Response): Promise<string> {
  const text = (await response.text()).trim();
  const awsType = response.headers.get('x-amzn-errortype')?.split(':')[0];
  let reason = text || response.statusText;
  try {
    const body = JSON.parse(text) as {
      errors?: { message?: string }[];
      message?: string;
      Message?: string;
      error?: string | { message?: string };
    };
    const messages = body.errors?.map((error) => error.message).filter(Boolean);
    const error = typeof body.error === 'string' ? body.error : body.error?.message;
    reason = messages?.length ? messages.join('; ') : (body.message ?? body.Message ?? error ?? reason);
  } catch {
    // Not JSON: the text is the reason.
  }
  reason = awsType ? `${awsType}: ${reason}` : reason;
  return reason.length > REASON_LENGTH ? `${reason.slice(0, REASON_LENGTH)}…` : reason;
}
