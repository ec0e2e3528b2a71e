/**
 * The typed client of inbox-api's REST API: the only way this server reaches the inbox service.
 * Every failure leaves here as one of two errors, mapped once: InboxApiError (the API answered
 * with an error, carrying its code and message) or InboxApiUnreachableError (no answer at all).
 */
import { z } from 'zod';
import {
  type Attachment,
  attachmentPageSchema,
  attachmentSchema,
  eventPageSchema,
  type Draft,
  draftSchema,
  type HeldSend,
  heldSendSchema,
  type Inbox,
  inboxPageSchema,
  type Message,
  messageSchema,
  searchPageSchema as crossInboxSearchPageSchema,
  inboxSchema,
  type SendMessageResult,
  sendMessageResultSchema,
  type Thread,
  threadPageSchema,
  threadSchema,
} from './api-schemas.js';
import { messageListSchema, receivedEventPageSchema, searchPageSchema } from './api-views.js';
import { keyDigest } from './auth/bearer.js';

/**
 * inbox-api's error envelope, read leniently (the generated `errorSchema` lists today's codes): an
 * error of a newer API, or without details, still reaches the caller with its code and message.
 */
const errorEnvelopeSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
});

/** The API answered with an error (its `{error: {code, message, details}}`), or with a body this client cannot read. */
export class InboxApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'InboxApiError';
  }
}

/** Longer than any id of the API (UUIDs): an id this long is none of its, whatever it holds. */
const MAX_ID_LENGTH = 256;

/**
 * An id as one path segment of a REST call. `.` and `..` stay dots when encoded, and a URL reads
 * them as steps up its path (`/v1/threads/..` is `GET /v1/`): such ids, ids longer than any of the
 * API's, and ids with a lone surrogate (valid JSON, but no text a URL can carry) are answered as
 * the API answers an id it does not know, without a call.
 */
function segment(id: string, resource: string): string {
  if (id.length > MAX_ID_LENGTH || id === '.' || id === '..' || !id.isWellFormed()) {
    throw new InboxApiError(404, 'not_found', `${resource} not found`);
  }
  return encodeURIComponent(id);
}

/** No answer at all: refused, reset, unresolvable or too slow. */
export class InboxApiUnreachableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InboxApiUnreachableError';
  }
}

export interface InboxApiOptions {
  /** SERVICE_API_URL; may carry a path prefix. */
  baseUrl: string;
  /** Sent as the bearer token: SERVICE_API_KEY, or a network caller's own key. */
  apiKey?: string;
  /** Longest wait for one answer; sends through a slow mail provider take seconds. */
  timeoutMs?: number;
}

interface CallOptions {
  signal?: AbortSignal;
}

type Query = Record<string, string | number | undefined>;

export interface SendMessageInput {
  inbox_id: string;
  to: string[];
  subject: string;
  body: string;
  reply_to_thread_id?: string;
  attachments?: { filename: string; content_type: string; content: string }[];
}

/**
 * What a send answers: the message sent (201), or, where the inbox's `send_policy` is `approval`,
 * 202 `{draft}`: the send held as a draft pending approval.
 */
const sendOutcomeSchema = z.union([sendMessageResultSchema, heldSendSchema]);
export type SendOutcome = SendMessageResult | HeldSend;

export interface CreateDraftInput extends SendMessageInput {
  cc?: string[];
  bcc?: string[];
  labels?: string[];
  send_at?: string;
}

export interface ReplyInput {
  body: string;
  reply_all?: boolean;
  cc?: string[];
  bcc?: string[];
  labels?: string[];
}

export interface ForwardInput {
  to: string[];
  body?: string;
  cc?: string[];
  bcc?: string[];
  labels?: string[];
}

/** GET /v1/search: across every inbox the key reaches, or `inbox_ids`. */
export interface SearchQuery {
  q: string;
  inbox_ids?: string[];
  labels?: string[];
  after?: string;
  before?: string;
  page_token?: string;
  limit: number;
}

export interface MessageFilter {
  inbox_id?: string;
  thread_id?: string;
  limit: number;
  offset: number;
}

export interface AttachmentFilter {
  message_id?: string;
  thread_id?: string;
  inbox_id?: string;
  limit: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

export class InboxApiClient {
  readonly baseUrl: string;
  /** keyDigest of the key it acts with (`none` without one): whose a task is. */
  readonly keyDigest: string;
  private readonly authorization: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: InboxApiOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.authorization = options.apiKey ? `Bearer ${options.apiKey}` : undefined;
    this.keyDigest = options.apiKey ? keyDigest(options.apiKey) : 'none';
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The same API, called with another key: a network caller's own. */
  withApiKey(apiKey: string): InboxApiClient {
    return new InboxApiClient({ baseUrl: this.baseUrl, apiKey, timeoutMs: this.timeoutMs });
  }

  createInbox(input: { name: string; email_username: string }, options?: CallOptions): Promise<Inbox> {
    return this.request(inboxSchema, 'POST', '/v1/inboxes', { body: input, ...options });
  }

  listInboxes(query: { limit: number; offset?: number; page_token?: string }, options?: CallOptions) {
    return this.request(inboxPageSchema, 'GET', '/v1/inboxes', { query, ...options });
  }

  sendMessage(input: SendMessageInput, options?: CallOptions): Promise<SendOutcome> {
    return this.request(sendOutcomeSchema, 'POST', '/v1/messages', { body: input, ...options });
  }

  async replyToMessage(messageId: string, input: ReplyInput, options?: CallOptions): Promise<SendOutcome> {
    return this.request(sendOutcomeSchema, 'POST', `/v1/messages/${segment(messageId, 'Message')}/reply`, {
      body: input,
      ...options,
    });
  }

  async forwardMessage(messageId: string, input: ForwardInput, options?: CallOptions): Promise<SendOutcome> {
    return this.request(sendOutcomeSchema, 'POST', `/v1/messages/${segment(messageId, 'Message')}/forward`, {
      body: input,
      ...options,
    });
  }

  createDraft(input: CreateDraftInput, options?: CallOptions): Promise<Draft> {
    return this.request(draftSchema, 'POST', '/v1/drafts', { body: input, ...options });
  }

  /** POST /v1/drafts/{id}/send: `{draft}`, sent (or scheduled), or `pending_approval` under the approval policy (202). */
  async sendDraft(draftId: string, options?: CallOptions): Promise<HeldSend> {
    return this.request(heldSendSchema, 'POST', `/v1/drafts/${segment(draftId, 'Draft')}/send`, options);
  }

  /** PATCH /v1/messages/{id}: adds and removes labels (removal wins); answers the message. */
  async updateLabels(
    messageId: string,
    change: { add_labels?: string[]; remove_labels?: string[] },
    options?: CallOptions,
  ): Promise<Message> {
    return this.request(messageSchema, 'PATCH', `/v1/messages/${segment(messageId, 'Message')}`, { body: change, ...options });
  }

  /** Full-text search across the key's inboxes (GET /v1/search), most relevant first. */
  search(query: SearchQuery, options?: CallOptions) {
    const { inbox_ids, labels, ...rest } = query;
    return this.request(crossInboxSearchPageSchema, 'GET', '/v1/search', {
      query: { ...rest, inbox_ids: inbox_ids?.join(','), labels: labels?.join(',') },
      ...options,
    });
  }

  listMessages(filter: MessageFilter, options?: CallOptions) {
    return this.request(messageListSchema, 'GET', '/v1/messages', { query: { ...filter }, ...options });
  }

  /**
   * `message.received` events of a thread after `after`; with `wait`, held by the API until one
   * commits or `wait` seconds pass (keep it well under this client's time limit).
   */
  receivedEvents(query: { thread_id: string; after: number; limit: number; wait?: number }, options?: CallOptions) {
    return this.request(receivedEventPageSchema, 'GET', '/v1/events', {
      query: { ...query, types: 'message.received' },
      ...options,
    });
  }

  searchMessages(filter: MessageFilter & { q: string }, options?: CallOptions) {
    return this.request(searchPageSchema, 'GET', '/v1/messages', { query: { ...filter }, ...options });
  }

  /** Events of the log after `after` (GET /v1/events), filtered as the query says. */
  listEvents(
    query: { after?: number; types?: string; inbox_id?: string; thread_id?: string; limit: number },
    options?: CallOptions,
  ) {
    return this.request(eventPageSchema, 'GET', '/v1/events', { query, ...options });
  }

  /** Thread summaries of an inbox, newest activity first. */
  listThreads(query: { inbox_id: string; limit: number; offset?: number; page_token?: string }, options?: CallOptions) {
    return this.request(threadPageSchema, 'GET', '/v1/threads', { query, ...options });
  }

  async getThread(threadId: string, options?: CallOptions): Promise<Thread> {
    return this.request(threadSchema, 'GET', `/v1/threads/${segment(threadId, 'Thread')}`, options);
  }

  listAttachments(filter: AttachmentFilter, options?: CallOptions) {
    return this.request(attachmentPageSchema, 'GET', '/v1/attachments', { query: { ...filter }, ...options });
  }

  async getAttachment(attachmentId: string, options?: CallOptions): Promise<Attachment> {
    return this.request(attachmentSchema, 'GET', `/v1/attachments/${segment(attachmentId, 'Attachment')}`, options);
  }

  /**
   * The bytes behind an attachment's `download_url`. The URL is its own credential (a signed link
   * of inbox-api, or a signed Cloud Storage URL that would refuse a second authorization), so the
   * API key is not sent along.
   */
  async download(downloadUrl: string, options?: CallOptions): Promise<Buffer> {
    const { origin } = new URL(downloadUrl);
    // For local and database storage the link leads to the API (at its public address); for Cloud Storage, to the bucket.
    const target = { name: origin === new URL(this.baseUrl).origin ? 'inbox API' : 'attachment storage', url: origin };
    const res = await this.send(downloadUrl, { method: 'GET', signal: options?.signal }, target);
    if (!res.ok) throw await this.errorFrom(res, `${target.name} at ${origin} answered the download_url with HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }

  private async request<T extends z.ZodType>(
    schema: T,
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    options: { query?: Query; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<z.output<T>> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.authorization) headers.authorization = this.authorization;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.send(
      url,
      { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), signal: options.signal },
      { name: 'inbox API', url: this.baseUrl },
    );
    if (!res.ok) throw await this.errorFrom(res, `inbox API answered ${method} ${path} with HTTP ${res.status}`);
    const parsed = schema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) {
      throw new InboxApiError(
        res.status,
        'upstream_error',
        `inbox API answered ${method} ${path} with a body this server does not understand`,
      );
    }
    return parsed.data;
  }

  /** fetch, with the time limit, and with every way of getting no answer turned into InboxApiUnreachableError. */
  private async send(
    url: URL | string,
    init: RequestInit & { signal?: AbortSignal },
    target: { name: string; url: string },
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    try {
      return await fetch(url, { ...init, signal });
    } catch (error) {
      // The caller's own cancellation is not the API's failure.
      if (init.signal?.aborted) throw init.signal.reason;
      const reason = timeout.aborted ? ` (no answer within ${this.timeoutMs / 1000} s)` : '';
      throw new InboxApiUnreachableError(`${target.name} unreachable at ${target.url}${reason}`, { cause: error });
    }
  }

  /** The API's error envelope as an InboxApiError; any other body as `upstream_error` with `otherwise`. */
  private async errorFrom(res: Response, otherwise: string): Promise<InboxApiError> {
    const envelope = errorEnvelopeSchema.safeParse(await res.json().catch(() => undefined));
    if (!envelope.success) return new InboxApiError(res.status, 'upstream_error', otherwise);
    const { code, message, details } = envelope.data.error;
    return new InboxApiError(res.status, code, message, details);
  }
}
