/**
 * What checking an organization's API key costs a request: p50 of `GET /v1/threads/{id}` with a
 * key limited to the thread's inbox against the same request in open mode (no key), in the same
 * run on the same server (open mode still checks the `inbx_` keys it is given), in alternating
 * rounds so that both see the same machine. The goal: at most 1 ms more at p50.
 *
 *   pnpm --filter inbox-api bench:keys [--seconds 5] [--rounds 3] [--connections 1]
 *
 * Creates a scratch database on TEST_DATABASE_URL's server (default postgresql://postgres@127.0.0.1:5432)
 * and drops it afterwards. Prints a Markdown table.
 */
import { parseArgs } from 'node:util';
import { type LoadResult, runLoad } from './load.js';
import { withBenchService } from './service.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '1' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

async function post<T>(url: string, body: object): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

const results = await withBenchService('keys', {}, async (service) => {
  const organization = await post<{ id: string }>(`${service.url}/v1/organizations`, { name: 'Bench' });
  const inbox = await post<{ id: string }>(`${service.url}/v1/inboxes`, {
    name: 'Bench',
    email_username: 'bench',
    organization_id: organization.id,
  });
  // A thread of a few messages, as an agent reads one.
  const first = await post<{ thread_id: string }>(`${service.url}/v1/messages`, {
    inbox_id: inbox.id,
    to: ['peer@outside.example'],
    subject: 'Bench thread',
    body: 'The first message of the thread.',
  });
  for (let i = 0; i < 4; i++) {
    await post(`${service.url}/v1/messages`, {
      inbox_id: inbox.id,
      to: ['peer@outside.example'],
      subject: 'Re: Bench thread',
      body: `Reply ${i}.`,
      reply_to_thread_id: first.thread_id,
    });
  }
  const { key } = await post<{ key: string }>(`${service.url}/v1/api-keys`, {
    name: 'Bench',
    organization_id: organization.id,
    inbox_ids: [inbox.id],
    permissions: ['read'],
  });
  const path = `/v1/threads/${first.thread_id}`;
  const modes: [string, Record<string, string>][] = [
    ['open mode (no key)', {}],
    ['API key limited to the inbox', { authorization: `Bearer ${key}` }],
  ];
  const measured: Record<string, LoadResult[]> = Object.fromEntries(modes.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, headers] of modes) {
      const result = await runLoad(service.url, { request: () => ({ method: 'GET', path, headers }), connections, seconds });
      if (Object.keys(result.statuses).join() !== '200') throw new Error(`${name}: statuses ${JSON.stringify(result.statuses)}`);
      measured[name]!.push(result);
    }
  }
  return measured;
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`GET /v1/threads/{id}, ${connections} connection(s), ${rounds} rounds of ${seconds} s each, alternating\n`);
console.log('| caller | p50 ms (median of rounds) | p50 of each round | p99 ms (median) | requests/s (median) |');
console.log('|---|---:|---|---:|---:|');
const p50s: number[] = [];
for (const [name, runs] of Object.entries(results)) {
  const p50 = median(runs.map((run) => run.p50));
  p50s.push(p50);
  console.log(
    `| ${name} | ${p50} | ${runs.map((run) => run.p50).join(', ')} | ${median(runs.map((run) => run.p99))} | ${median(runs.map((run) => run.perSecond))} |`,
  );
}
console.log(`\nThe key adds ${Math.round((p50s[1]! - p50s[0]!) * 100) / 100} ms at p50 (goal: at most 1 ms).`);
