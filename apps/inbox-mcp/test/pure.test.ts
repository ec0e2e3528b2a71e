/** The pure parts, without a server: the resources' formatters and the rules the tools and transports follow. */
import { ValidationError, NotFoundError, AppError } from '@repo/errors';
import type { Attachment, Thread, ThreadSummary } from '../src/api-schemas.js';
import { bearerChallenge, credentialsOf, keyDigest, protectedResourceMetadata, publicBaseUrl } from '../src/auth/bearer.js';
import { KeyChecks, type KeyVerdict } from '../src/auth/key-checks.js';
import { jsonRpcErrorFormat } from '../src/json-rpc-errors.js';
import { RECENT_THREAD_COUNT, recentThreadsJson } from '../src/resources/recent-threads.js';
import { formatDate, threadMarkdown } from '../src/resources/thread-markdown.js';
import { InFlightRequests } from '../src/stateless-cancellation.js';
import { binaryContent } from '../src/tools/attachments.js';
import { nextProgressDelayMs } from '../src/tools/wait-for-reply.js';

describe('thread Markdown', () => {
  const thread: Thread = {
    id: 't1',
    inbox_id: 'i1',
    subject: 'Quarterly report',
    last_message_at: '2026-03-02T08:05:59.000Z',
    summary: 'Ada asks for the report; the agent sends it.',
    messages: [
      {
        id: 'm1',
        role: 'user',
        author: 'ada@example.com',
        content: 'Could you send the **Q1** report?',
        timestamp: '2026-03-01T23:59:30.000Z',
      },
      { id: 'm2', role: 'assistant', author: 'agent@inbox.test', content: 'Here it is.', timestamp: '2026-03-02T08:05:59.000Z' },
    ],
  };

  it('lays a thread out as the spec says: heading, Summary, one block per message with ← / →, separated by rules', () => {
    expect(threadMarkdown(thread)).toBe(
      [
        '## Quarterly report',
        '',
        '### Summary',
        '',
        'Ada asks for the report; the agent sends it.',
        '',
        '---',
        '',
        'From: ada@example.com ←',
        'Date: 2026-03-01 23:59',
        '',
        'Could you send the **Q1** report?',
        '',
        '---',
        '',
        'From: agent@inbox.test →',
        'Date: 2026-03-02 08:05',
        '',
        'Here it is.',
        '',
      ].join('\n'),
    );
  });

  it('says so when there is no summary yet, and has no message blocks for an empty thread', () => {
    expect(threadMarkdown({ ...thread, summary: null, messages: [] })).toBe(
      '## Quarterly report\n\n### Summary\n\n_No summary yet._\n',
    );
  });

  it('writes dates as YYYY-MM-DD HH:MM in UTC, whatever offset the timestamp has', () => {
    expect(formatDate('2026-12-31T23:30:00-02:00')).toBe('2027-01-01 01:30');
    expect(formatDate('2026-01-05T07:08:09.999Z')).toBe('2026-01-05 07:08');
  });
});

describe('recent threads JSON', () => {
  const summary = (n: number): ThreadSummary => ({
    id: `t${n}`,
    subject: `Subject ${n}`,
    last_message_at: `2026-03-${String(n).padStart(2, '0')}T10:00:00.000Z`,
    message_count: n,
    participants: ['a@example.com', 'agent@inbox.test'],
    labels: [],
    summary: n % 2 ? null : `Summary ${n}`,
  });

  it('is an array of the newest threads with exactly the spec fields, at most ten', () => {
    const threads = Array.from({ length: 12 }, (_, i) => summary(i + 1));
    const parsed = JSON.parse(recentThreadsJson(threads));
    expect(parsed).toHaveLength(RECENT_THREAD_COUNT);
    const { labels: _labels, ...specFields } = summary(1);
    expect(parsed[0]).toEqual(specFields);
    expect(Object.keys(parsed[0])).toEqual(['id', 'subject', 'last_message_at', 'message_count', 'participants', 'summary']);
  });

  it('drops fields the API may add', () => {
    const extra = { ...summary(1), inbox_id: 'i1' } as ThreadSummary;
    const { labels: _labels, ...specFields } = summary(1);
    expect(JSON.parse(recentThreadsJson([extra]))).toEqual([specFields]);
  });
});

describe('wait_for_reply progress', () => {
  it('reports after 1 s, then half again later each time, up to every 10 s', () => {
    const delays: number[] = [];
    let delay: number | undefined;
    for (let i = 0; i < 9; i++) delays.push((delay = nextProgressDelayMs(delay)));
    expect(delays).toEqual([1000, 1500, 2250, 3375, 5062.5, 7593.75, 10_000, 10_000, 10_000]);
  });
});

describe('get_attachment_content with format binary', () => {
  const attachment = (content_type: string) =>
    ({ content_type, download_url: 'http://api/v1/attachments/a1/content?token=t' }) as Attachment;

  it('gives images and audio as image and audio content, anything else as an embedded resource blob', () => {
    expect(binaryContent(attachment('image/png'), 'AAA=')).toEqual({ type: 'image', data: 'AAA=', mimeType: 'image/png' });
    expect(binaryContent(attachment('audio/mpeg'), 'AAA=')).toEqual({ type: 'audio', data: 'AAA=', mimeType: 'audio/mpeg' });
    expect(binaryContent(attachment('application/pdf'), 'AAA=')).toEqual({
      type: 'resource',
      resource: { uri: 'http://api/v1/attachments/a1/content?token=t', mimeType: 'application/pdf', blob: 'AAA=' },
    });
  });
});

describe('JSON-RPC errors of the HTTP endpoints', () => {
  it('maps a body that is not JSON to -32700, other client errors to -32000, server failures to -32603', () => {
    const parseError = new ValidationError([{ loc: ['body'], msg: 'Request body is not valid JSON', type: 'json_invalid' }]);
    expect(jsonRpcErrorFormat(parseError)).toEqual({
      status: 400,
      body: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Request body is not valid JSON' }, id: null },
    });
    expect(jsonRpcErrorFormat(new NotFoundError('No route for GET /x')).body).toMatchObject({ error: { code: -32000 } });
    expect(jsonRpcErrorFormat(new AppError('internal_error', 'Internal server error'))).toMatchObject({
      status: 500,
      body: { error: { code: -32603 } },
    });
  });
});

describe('cancellation in stateless streamable HTTP', () => {
  const cancelled = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });

  it('cancels the in-flight request a notifications/cancelled names, of the same client only', () => {
    const inFlight = new InFlightRequests();
    const cancel = jest.fn();
    const forget = inFlight.track('client-a', { jsonrpc: '2.0', id: 7, method: 'tools/call' }, cancel);
    inFlight.cancelNamedIn('client-b', cancelled(7));
    inFlight.cancelNamedIn('client-a', cancelled(8));
    expect(cancel).not.toHaveBeenCalled();
    inFlight.cancelNamedIn('client-a', [cancelled(7)]);
    expect(cancel).toHaveBeenCalledTimes(1);
    forget();
    inFlight.cancelNamedIn('client-a', cancelled(7));
    expect(cancel).toHaveBeenCalledTimes(1);
  });

  it('cancels nothing when two requests in flight share the client and the id (two agents of one key on one host)', () => {
    const inFlight = new InFlightRequests();
    const first = jest.fn();
    const second = jest.fn();
    inFlight.track('shared', { jsonrpc: '2.0', id: 0, method: 'tools/call' }, first);
    const forgetSecond = inFlight.track('shared', { jsonrpc: '2.0', id: 0, method: 'tools/call' }, second);
    inFlight.cancelNamedIn('shared', cancelled(0));
    expect([first, second].map((cancel) => cancel.mock.calls.length)).toEqual([0, 0]);
    // Once the request is alone again, its cancel reaches it.
    forgetSecond();
    inFlight.cancelNamedIn('shared', cancelled(0));
    expect([first, second].map((cancel) => cancel.mock.calls.length)).toEqual([1, 0]);
  });

  it('tracks requests only, not notifications or responses', () => {
    const inFlight = new InFlightRequests();
    const cancel = jest.fn();
    inFlight.track(
      'c',
      [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 3, result: {} },
      ],
      cancel,
    );
    inFlight.cancelNamedIn('c', cancelled(3));
    expect(cancel).not.toHaveBeenCalled();
  });

  it('takes only string and number ids: an object or an array 20,000 deep names no request, and throws nothing', () => {
    const inFlight = new InFlightRequests();
    const cancel = jest.fn();
    let deep: unknown = 1;
    for (let depth = 0; depth < 20_000; depth += 1) deep = [deep];
    for (const id of [deep, { a: 1 }, null, true]) {
      expect(() => inFlight.track('c', { jsonrpc: '2.0', id, method: 'tools/call' }, cancel)).not.toThrow();
      expect(() => inFlight.cancelNamedIn('c', cancelled(id))).not.toThrow();
    }
    inFlight.track('c', { jsonrpc: '2.0', id: 'x', method: 'tools/call' }, cancel);
    inFlight.cancelNamedIn('c', cancelled({ a: 1 }));
    expect(cancel).not.toHaveBeenCalled();
    inFlight.cancelNamedIn('c', cancelled('x'));
    expect(cancel).toHaveBeenCalledTimes(1);
  });
});

describe('bearer credentials', () => {
  it.each<[string | undefined, ReturnType<typeof credentialsOf>]>([
    [undefined, { kind: 'none' }],
    ['', { kind: 'none' }],
    ['   ', { kind: 'none' }],
    ['Bearer abc', { kind: 'bearer', token: 'abc' }],
    ['bearer abc', { kind: 'bearer', token: 'abc' }],
    ['BEARER  ibx_Zm9v-bar.baz~+/==', { kind: 'bearer', token: 'ibx_Zm9v-bar.baz~+/==' }],
    // Operator keys of INBOX_API_KEYS may hold other punctuation: inbox-api judges them.
    ['Bearer k!e@y#$%', { kind: 'bearer', token: 'k!e@y#$%' }],
    ['Basic dXNlcjpwYXNz', { kind: 'unsupported' }],
    ['Bearerabc', { kind: 'unsupported' }],
    ['Bearer', { kind: 'malformed' }],
    ['Bearer a b', { kind: 'malformed' }],
    ['Bearer a\u0000b', { kind: 'malformed' }],
    ['Bearer ключ', { kind: 'malformed' }],
    ["Bearer ' OR 1=1 --", { kind: 'malformed' }],
  ])('%j is %j', (header, expected) => {
    expect(credentialsOf(header)).toEqual(expected);
  });

  it('challenges without an error when no token came, with invalid_token when one was refused (RFC 6750, 3.1)', () => {
    const url = 'https://mcp.example.com/.well-known/oauth-protected-resource';
    expect(bearerChallenge(url)).toBe(`Bearer resource_metadata="${url}"`);
    expect(bearerChallenge(url, { description: 'inbox-api refused this API key' })).toBe(
      `Bearer resource_metadata="${url}", error="invalid_token", error_description="inbox-api refused this API key"`,
    );
  });

  it('describes the resource with bearer tokens in the header only, and names no authorization server', () => {
    expect(protectedResourceMetadata('https://mcp.example.com/mcp')).toEqual({
      resource: 'https://mcp.example.com/mcp',
      bearer_methods_supported: ['header'],
      resource_name: 'inbox-mcp',
    });
  });

  it.each<[string | undefined, { protocol: string; host: string | undefined }, string | undefined]>([
    ['https://mcp.example.com/prefix', { protocol: 'http', host: 'other' }, 'https://mcp.example.com/prefix'],
    [undefined, { protocol: 'http', host: '127.0.0.1:8200' }, 'http://127.0.0.1:8200'],
    [undefined, { protocol: 'https', host: 'MCP.Example.com' }, 'https://mcp.example.com'],
    [undefined, { protocol: 'https', host: 'mcp.example.com:443' }, 'https://mcp.example.com'],
    [undefined, { protocol: 'http', host: '[::1]:8200' }, 'http://[::1]:8200'],
    // X-Forwarded-Proto is whatever a proxy wrote: anything but https is http.
    [undefined, { protocol: 'gopher', host: 'localhost' }, 'http://localhost'],
    [undefined, { protocol: 'http', host: undefined }, undefined],
    [undefined, { protocol: 'http', host: 'a"b' }, undefined],
    [undefined, { protocol: 'http', host: 'a b' }, undefined],
    [undefined, { protocol: 'http', host: 'a/b' }, undefined],
    [undefined, { protocol: 'http', host: 'host:port' }, undefined],
  ])('the public base URL of %j and %j is %j', (configured, request, expected) => {
    expect(publicBaseUrl(configured, request)).toBe(expected);
  });

  it('knows a key by its SHA-256, never by the key itself', () => {
    expect(keyDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('verdicts on keys (KeyChecks)', () => {
  function checks(answers: Record<string, KeyVerdict | Error>, options: { ttlMs?: number; maxEntries?: number } = {}) {
    let now = 1_000;
    const asked: string[] = [];
    const keyChecks = new KeyChecks({
      ask: (key) => {
        asked.push(key);
        const answer = answers[key] ?? 'rejected';
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
      ttlMs: options.ttlMs ?? 5_000,
      maxEntries: options.maxEntries ?? 100,
      now: () => now,
    });
    return { keyChecks, asked, advance: (ms: number) => (now += ms) };
  }

  it('reuses a verdict within the period, and asks again after it', async () => {
    const { keyChecks, asked, advance } = checks({ good: 'accepted' });
    expect(await keyChecks.verdictOn('good')).toBe('accepted');
    expect(await keyChecks.verdictOn('bad')).toBe('rejected');
    advance(4_999);
    expect(await keyChecks.verdictOn('good')).toBe('accepted');
    expect(await keyChecks.verdictOn('bad')).toBe('rejected');
    expect(asked).toEqual(['good', 'bad']);
    advance(2);
    await keyChecks.verdictOn('good');
    expect(asked).toEqual(['good', 'bad', 'good']);
  });

  it('asks once for concurrent requests with a new key', async () => {
    const { keyChecks, asked } = checks({ good: 'accepted' });
    expect(await Promise.all([1, 2, 3].map(() => keyChecks.verdictOn('good')))).toEqual(['accepted', 'accepted', 'accepted']);
    expect(asked).toEqual(['good']);
  });

  it('keeps neither an unknown verdict nor a failure to ask: the next request asks again', async () => {
    const { keyChecks, asked } = checks({ maybe: 'unknown', broken: new Error('bug') });
    expect(await keyChecks.verdictOn('maybe')).toBe('unknown');
    await expect(keyChecks.verdictOn('broken')).rejects.toThrow('bug');
    await keyChecks.verdictOn('maybe');
    await expect(keyChecks.verdictOn('broken')).rejects.toThrow('bug');
    expect(asked).toEqual(['maybe', 'broken', 'maybe', 'broken']);
  });

  it('keeps at most maxEntries verdicts, forgetting the least recently used first', async () => {
    const { keyChecks, asked } = checks({ a: 'accepted', b: 'accepted', c: 'accepted' }, { maxEntries: 2 });
    for (const key of ['a', 'b', 'c', 'c', 'b', 'a']) await keyChecks.verdictOn(key);
    expect(asked).toEqual(['a', 'b', 'c', 'a']);
  });
});
