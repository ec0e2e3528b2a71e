/**
 * Answers that depend on a real inbox-api (no INBOX_API_KEYS: any key passes), inbox-mcp in process
 * on streamable HTTP, spoken to with raw HTTP: when a long wait's headers go out, and ids no URL can carry.
 */
import { createLogger, createMetrics, type RunningServer, serve } from '@repo/http';
import { InboxApiClient } from '../src/api-client.js';
import { buildHttpApp } from '../src/http-app.js';
import { createMcpServer } from '../src/mcp-server.js';
import { type Correspondence, type InboxApi, startCorrespondence, startInboxApi } from './support/inbox-api.js';
import { TEST_TASK_KEY } from './support/task-key.js';

jest.setTimeout(180_000);

const KEY = 'raw-http-key-0123456789';
let inboxApi: InboxApi;
let server: RunningServer;
let correspondence: Correspondence;

beforeAll(async () => {
  inboxApi = await startInboxApi('inbox_mcp_raw_http');
  correspondence = await startCorrespondence(inboxApi, KEY);
  const logger = createLogger({ service: 'inbox-mcp', level: 'silent' });
  const app = buildHttpApp({
    transport: 'http',
    createServer: (api, reach) => createMcpServer({ api, logger, taskKey: TEST_TASK_KEY }, reach),
    api: new InboxApiClient({ baseUrl: inboxApi.url }),
    allowAnonymous: false,
    logger,
    metrics: createMetrics({ service: 'inbox-mcp', collectDefault: false }),
    host: '127.0.0.1',
    trustProxyHops: 0,
  });
  server = await serve(app, { port: 0, host: '127.0.0.1', logger, shutdownTimeoutMs: 1000 });
});
afterAll(async () => {
  await server?.shutdown('test');
  await inboxApi?.stop();
});

const headers = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${KEY}`,
  ...extra,
});

/** The JSON-RPC messages of an SSE (or JSON) answer. */
function messagesOf(text: string): { id?: unknown; result?: Record<string, unknown>; error?: unknown }[] {
  const lines = text.split('\n').filter((line) => line.startsWith('data: '));
  return lines.length > 0 ? lines.map((line) => JSON.parse(line.slice(6))) : text ? [JSON.parse(text)] : [];
}

describe('a 2026-07-28 wait_for_reply without a progress token', () => {
  // http-app.ts: "an answer slow to begin (a wait) has them [the headers] sent alone after a moment, so that
  // its client sees the stream open". Node's fetch gives up on a response whose headers take 300 s
  // (undici headersTimeout), while the tool accepts timeout_seconds up to 900.
  it('has its response headers sent at once, as the 2025-11-25 call has, not only when the wait ends', async () => {
    const { threadId } = await correspondence.newThread('Headers?');
    const timeToHeaders = async (era: '2025-11-25' | '2026-07-28') => {
      const started = Date.now();
      const params = {
        name: 'wait_for_reply',
        arguments: { thread_id: threadId, timeout_seconds: 5 },
        ...(era === '2026-07-28' && {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw-http', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        }),
      };
      const res = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: headers({
          'mcp-protocol-version': era,
          ...(era === '2026-07-28' && { 'mcp-method': 'tools/call', 'mcp-name': 'wait_for_reply' }),
        }),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
      });
      const elapsed = Date.now() - started;
      expect(messagesOf(await res.text()).at(-1)?.result?.structuredContent).toMatchObject({ status: 'timed_out' });
      return elapsed;
    };
    expect(await timeToHeaders('2025-11-25')).toBeLessThan(2000);
    expect(await timeToHeaders('2026-07-28')).toBeLessThan(2000);
  });
});

describe('an id holding a lone surrogate (valid JSON: "\\ud800")', () => {
  // README: a REST error becomes a result whose text is the API's envelope {"error": {"code", ...}};
  // ids are answered not_found when they cannot be any of the API's. Here encodeURIComponent throws.
  it('is answered with the API envelope (not_found or validation_error), not a bare "URI malformed"', async () => {
    for (const [name, args] of [
      ['get_thread', { thread_id: '\ud800' }],
      ['update_labels', { message_id: 'a\udfff', add_labels: ['x'] }],
    ] as const) {
      const res = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
      const [answer] = messagesOf(await res.text());
      const result = answer?.result as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      let envelope: unknown;
      try {
        envelope = JSON.parse(result.content[0]!.text);
      } catch {
        envelope = result.content[0]!.text;
      }
      expect({ name, envelope }).toEqual({ name, envelope: { error: expect.objectContaining({ code: expect.any(String) }) } });
    }
  });
});
