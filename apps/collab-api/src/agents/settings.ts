import { setting } from '@repo/config';
import type { z } from 'zod';

/** The largest limit a rate-limit window takes (the database's integer). */
export const MAX_RATE_LIMIT = 2_147_483_647;

/** The agents' environment variables, to spread into the app's configuration schema. */
export function agentSettings() {
  const defaultLimit = (window: string, value: number) =>
    setting
      .integer({ min: 0, max: MAX_RATE_LIMIT })
      .default(value)
      .describe(`Requests per ${window} a new agent takes until its rate limits are changed; 0: no limit per ${window}.`);
  return {
    COLLAB_AGENT_ALLOW_PRIVATE: setting
      .boolean()
      .default(false)
      .describe(
        'Let agents be called at private (RFC 1918, 100.64/10, fc00::/7) and loopback addresses, for development and tests. Link-local and cloud metadata addresses are refused whatever this says.',
      ),
    COLLAB_AGENT_TIMEOUT_SECONDS: setting
      .integer({ min: 1, max: 600 })
      .default(30)
      .describe(
        "How long one call to an agent may take, reading an A2A agent's card included. Longer: the route result carries a timeout error; the gateway answers 502.",
      ),
    COLLAB_AGENT_CARD_TTL_SECONDS: setting
      .integer({ min: 0, max: 86_400 })
      .default(300)
      .describe("How long an A2A agent's card (its protocol version and addresses) is used before it is read again."),
    COLLAB_AGENT_ROUTE_CONCURRENCY: setting
      .integer({ min: 1, max: 100 })
      .default(8)
      .describe('How many agents of a project one routed message is sent to at the same time.'),
    COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_SECOND: defaultLimit('second', 10),
    COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_MINUTE: defaultLimit('minute', 300),
    COLLAB_AGENT_DEFAULT_MAX_REQUESTS_PER_HOUR: defaultLimit('hour', 5000),
    COLLAB_AGENT_ID_SECRET: setting
      .string()
      .optional()
      .describe(
        "Key that binds the task, context and session ids handed out by routing to the caller's tenant (HMAC-SHA256), e.g. `openssl rand -base64 32`; replicas need the same one. Unset: a key generated in DATA_DIR.",
      ),
  };
}

export type AgentSettings = z.output<z.ZodObject<ReturnType<typeof agentSettings>>>;
