/**
 * The A2A client's cache of agent cards (COLLAB_AGENT_CARD_TTL_SECONDS), against a real A2A agent
 * of @a2a-js/sdk: a card is read once per period, and with a period of 0 before every call.
 */
import { createA2aClient } from '../../src/adapters/agents/a2a.js';
import type { CallOptions } from '../../src/adapters/agents/interface.js';
import { startA2aAgent, type TestAgent } from './servers.js';

let agent: TestAgent;
beforeAll(async () => {
  agent = await startA2aAgent();
});
afterAll(() => agent.close());

const call: CallOptions = { requestId: 'req-1', ids: { toAgent: (id) => id, fromAgent: (id) => id } };
const cardReads = () => agent.requests.filter((request) => request.path === '/.well-known/agent-card.json').length;

async function readsForThreeCalls(cardTtlSeconds: number): Promise<number> {
  const client = createA2aClient({ fetch, timeoutSeconds: 10, cardTtlSeconds });
  const before = cardReads();
  for (let i = 0; i < 3; i += 1) {
    const reply = await client.send(agent.url, client.readMessage({ text: 'hello' }), call);
    expect(reply.result).toMatchObject({ message: { parts: [{ text: 'echo: hello' }] } });
  }
  return cardReads() - before;
}

it('reads a card once within its period', async () => {
  expect(await readsForThreeCalls(300)).toBe(1);
});

it('reads the card before every call when the period is 0', async () => {
  expect(await readsForThreeCalls(0)).toBe(3);
});
