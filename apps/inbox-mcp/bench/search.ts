/**
 * What inbox-mcp adds to a search: `search_email` called with the MCP SDK's Client over stateless
 * streamable HTTP, against the same REST call (`GET /v1/messages?inbox_id=&q=&limit=10`) made
 * directly, one request at a time, the two interleaved so that both meet the same conditions.
 * inbox-api (on a scratch database, seeded through its API) and inbox-mcp each run as their own
 * process, from source as `pnpm dev` runs them, logging one line per request as in production.
 * inbox-api requires an API key, which both paths send: inbox-mcp passes the client's on, after
 * checking it with inbox-api once per 5 s.
 *
 *   pnpm --filter inbox-mcp bench:search [--requests 1000] [--messages 400]
 *
 * Prints a Markdown table of p50/p95 latencies (ms) and the overhead.
 */
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { startInboxApi } from '../test/support/inbox-api.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '1000' }, messages: { type: 'string', default: '400' } },
});
const requests = Number(values.requests);
const messages = Number(values.messages);
const WARM_UP = 100;
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

  const restUrl = `${inboxApi.url}/v1/messages?${new URLSearchParams({ inbox_id: agent.id, q: QUERY, limit: '10', offset: '0' }).toString()}`;
  const direct = async () => {
    const res = await fetch(restUrl, { headers: { authorization } });
    if (!res.ok) throw new Error(`direct search: ${res.status}`);
    await res.json();
  };
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`), { requestInit: { headers: { authorization } } }),
  );
  await client.listTools(); // lets the client check results against the output schema, as real clients do
  const viaMcp = async () => {
    const result = await client.callTool({ name: 'search_email', arguments: { query: QUERY, inbox_id: agent.id } });
    if (result.isError) throw new Error(`search_email failed: ${JSON.stringify(result.content)}`);
  };

  const timings = { direct: [] as number[], mcp: [] as number[] };
  for (let i = 0; i < WARM_UP + requests; i++) {
    for (const [name, run] of [
      ['direct', direct],
      ['mcp', viaMcp],
    ] as const) {
      const started = performance.now();
      await run();
      if (i >= WARM_UP) timings[name].push(performance.now() - started);
    }
  }
  await client.close();

  const [directSorted, mcpSorted] = [timings.direct.sort((a, b) => a - b), timings.mcp.sort((a, b) => a - b)];
  const row = (name: string, sorted: number[]) =>
    `| ${name} | ${percentile(sorted, 50).toFixed(2)} | ${percentile(sorted, 95).toFixed(2)} |`;
  console.log(`search_email vs the REST call, ${requests} requests each after ${WARM_UP} warm-up, ${messages} messages seeded`);
  console.log('');
  console.log('| path | p50 (ms) | p95 (ms) |');
  console.log('|---|---|---|');
  console.log(row('`GET /v1/messages?inbox_id=&q=` directly', directSorted));
  console.log(row('`search_email` over streamable HTTP', mcpSorted));
  console.log(
    `| overhead | ${(percentile(mcpSorted, 50) - percentile(directSorted, 50)).toFixed(2)} | ${(percentile(mcpSorted, 95) - percentile(directSorted, 95)).toFixed(2)} |`,
  );
} finally {
  await mcp.stop();
  await inboxApi.stop();
}
