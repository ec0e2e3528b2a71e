import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export const SERVER_INFO = { name: 'inbox-mcp', version: '0.1.0' } as const;

/**
 * One MCP server instance. Network transports create one per session (SSE) or per request
 * (stateless streamable HTTP), so nothing here may hold per-client state.
 */
export function createMcpServer(): McpServer {
  return new McpServer(SERVER_INFO, {
    instructions: 'E-mail inboxes for agents: create inboxes, send and read mail, search, attachments.',
  });
}
