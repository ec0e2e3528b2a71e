import { createA2aClient } from './a2a.js';
import type { AgentClient } from './interface.js';
import { createMcpClient } from './mcp.js';
import { createAgentNetwork, type Resolve } from './network.js';

export { type AddressKind, classifyAddress, type Refusal, refusalMessage, refusedAddress, refusedHost } from './addresses.js';
export {
  AgentCallError,
  type AgentCallFailure,
  type AgentClient,
  type AgentReply,
  type ForwardedAnswer,
  type IdBinding,
  type JsonRpcError,
  type JsonRpcRequest,
} from './interface.js';
export type { Resolve } from './network.js';

export type AgentProtocolName = 'A2A' | 'MCP';

export interface AgentClients {
  byProtocol: Record<AgentProtocolName, AgentClient>;
  /** Closes the connections kept open to agents. */
  close(): Promise<void>;
}

export interface AgentClientSettings {
  /** Private and loopback addresses allowed (COLLAB_AGENT_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  timeoutSeconds: number;
  cardTtlSeconds: number;
  /** How host names are resolved; the system's resolver unless a test gives its own. */
  resolve?: Resolve;
}

/** The A2A and MCP clients, sharing one checked network (network.ts). */
export function createAgentClients(settings: AgentClientSettings): AgentClients {
  const network = createAgentNetwork({ policy: { allowPrivate: settings.allowPrivate }, resolve: settings.resolve });
  return {
    byProtocol: {
      A2A: createA2aClient({
        fetch: network.fetch,
        timeoutSeconds: settings.timeoutSeconds,
        cardTtlSeconds: settings.cardTtlSeconds,
      }),
      MCP: createMcpClient({ fetch: network.fetch, timeoutSeconds: settings.timeoutSeconds }),
    },
    close: () => network.close(),
  };
}
