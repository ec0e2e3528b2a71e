/**
 * What inbox-mcp adds, on both protocol eras: `search_email` and `list_messages` called with SDK v1's
 * Client (2025-11-25) and SDK v2's (pinned to 2026-07-28) over stateless streamable HTTP, against the
 * same REST calls (`GET /v1/messages?inbox_id=&q=&limit=10`, `GET /v1/messages?inbox_id=&limit=50`)
 * made directly, one request at a time, all interleaved so that each meets the same conditions.
 * inbox-api (scratch database, seeded through its API) and inbox-mcp each run as their own process,
 * from source as `pnpm dev` runs them, with an API key on both paths.
 *
 *   pnpm --filter inbox-mcp bench:overhead [--requests 500] [--messages 400]
 *
 * Prints a Markdown table of p50/p95 latencies (ms) and each era's overhead over the REST call.
 */
import { parseArgs } from 'node:util';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { startInboxApi } from '../test/support/inbox-api.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '500' }, messages: { type: 'string', default: '400' } },
});
const requests = Number(values.requests);
const messages = Number(values.messages);
const WARM_UP = 50;
const QUERY = 'invoice';
const KEY = 'bench-key-0123456789';
const authorization = `Bearer ${KEY}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function post(url: string, body: unknown): Promise<{ id: string; email_address: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; email_address: string };
}

const inboxApi = await startInboxApi('mcp_bench', { apiKeys: [KEY] });
const mcp = await startService('src/main.ts', {
  cwd: appRoot,
  env: { PORT: undefined, SERVICE_API_URL: inboxApi.url, LOG_LEVEL: 'info' },
  args: ['--transport', 'http', '--port', '0'],
  // The young generation as infra/docker/inbox-mcp.Dockerfile sizes it.
  nodeArgs: ['--max-semi-space-size=16'],
  keepLogs: false,
});
try {
  const sender = await post(`${inboxApi.url}/v1/inboxes`, { name: 'Sender', email_username: 'sender' });
  const agent = await post(`${inboxApi.url}/v1/inboxes`, { name: 'Agent', email_username: 'agent' });
  for (let i = 0; i < messages; i++) {
    // One message in four mentions the query, as a search for a medium-frequent word finds.
    const topic = i % 4 === 0 ? `${QUERY} ${i}` : `update ${i}`;
    await post(`${inboxApi.url}/v1/messages`, {
      inbox_id: sender.id,
      to: [agent.email_address],
      subject: `About the ${topic}`,
      body: `Hello,\n\nthis is about the ${topic}: the figures are attached in the usual place.\n\nRegards`,
    });
  }

  const rest = (query: Record<string, string>) => async () => {
    const res = await fetch(`${inboxApi.url}/v1/messages?${new URLSearchParams(query).toString()}`, {
      headers: { authorization },
    });
    if (!res.ok) throw new Error(`direct call: ${res.status}`);
    await res.json();
  };
  const v1 = new Client({ name: 'bench', version: '1.0.0' });
  await v1.connect(new StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`), { requestInit: { headers: { authorization } } }));
  const v2 = new ClientV2({ name: 'bench-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await v2.connect(
    new StreamableHTTPClientTransportV2(new URL(`${mcp.url}/mcp`), { requestInit: { headers: { authorization } } }),
  );
  // Lets the clients check results against the output schemas, as real clients do.
  await v1.listTools();
  await v2.listTools();
  const tool = (client: Client | ClientV2, name: string, args: Record<string, unknown>) => async () => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  };
  const search = { query: QUERY, inbox_id: agent.id };
  const list = { inbox_id: agent.id };
  const legs = {
    'REST search': rest({ inbox_id: agent.id, q: QUERY, limit: '10', offset: '0' }),
    'search_email 2025-11-25 (SDK v1 client)': tool(v1, 'search_email', search),
    'search_email 2026-07-28 (SDK v2 client)': tool(v2, 'search_email', search),
    'REST list': rest({ inbox_id: agent.id, limit: '50', offset: '0' }),
    'list_messages 2025-11-25 (SDK v1 client)': tool(v1, 'list_messages', list),
    'list_messages 2026-07-28 (SDK v2 client)': tool(v2, 'list_messages', list),
  };
  const timings = Object.fromEntries(Object.keys(legs).map((name) => [name, [] as number[]]));
  for (let i = 0; i < WARM_UP + requests; i++) {
    for (const [name, run] of Object.entries(legs)) {
      const started = performance.now();
      await run();
      if (i >= WARM_UP) timings[name]!.push(performance.now() - started);
    }
  }
  await v1.close();
  await v2.close();

  const sorted = Object.fromEntries(Object.entries(timings).map(([name, list]) => [name, list.sort((a, b) => a - b)]));
  const p = (name: string, at: number) => percentile(sorted[name]!, at);
  console.log(`${requests} requests per path after ${WARM_UP} warm-up, ${messages} messages seeded`);
  console.log('');
  console.log('| path | p50 (ms) | p95 (ms) | overhead p50 | overhead p95 |');
  console.log('|---|---|---|---|---|');
  for (const name of Object.keys(legs)) {
    const base = name.startsWith('search') ? 'REST search' : name.startsWith('list') ? 'REST list' : undefined;
    const overhead = (at: number) => (base ? `+${(p(name, at) - p(base, at)).toFixed(2)}` : '');
    console.log(`| ${name} | ${p(name, 50).toFixed(2)} | ${p(name, 95).toFixed(2)} | ${overhead(50)} | ${overhead(95)} |`);
  }
} finally {
  await mcp.stop();
  await inboxApi.stop();
}
