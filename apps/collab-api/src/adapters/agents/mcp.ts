/**
 * MCP agents, through the MCP SDK's Client over streamable HTTP: a routed message is one
 * `tools/call` (tool named in `message.tool`, arguments in `message.arguments`) in a session of
 * its own, ended after the call. Every request goes through the checked fetch of network.ts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { parseInput } from '@repo/errors';
import type { AgentClient, ForwardedAnswer } from './interface.js';
import { isEventStream, readJsonRpcAnswer, runCall, usableAnswer } from './network.js';

export interface McpClientOptions {
  /** The checked fetch of network.ts. */
  fetch: typeof fetch;
  timeoutSeconds: number;
}

const toolCall = z.object({
  tool: z.string().min(1).meta({ description: 'The MCP tool to call' }),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

const CLIENT_INFO = { name: 'collab-api', version: '1.0.0' };

export function createMcpClient(options: McpClientOptions): AgentClient {
  const timeout = options.timeoutSeconds * 1000;
  // The SDK reads an event stream one event at a time: its events are capped, not its length.
  const calls = { fetch: options.fetch, timeoutSeconds: options.timeoutSeconds, eventStreams: true };
  return {
    // Other fields are dropped: a message for a whole project may carry an A2A message too.
    readMessage: (input) => parseInput(z.object({ message: toolCall }), 'body', { message: input }).message,

    send: (endpointUrl, message, call) =>
      runCall(calls, call.requestId, async ({ signal, fetch }) => {
        const { tool, arguments: args } = message as z.output<typeof toolCall>;
        const transport = new StreamableHTTPClientTransport(new URL(endpointUrl), { fetch });
        const client = new Client(CLIENT_INFO);
        try {
          await client.connect(transport, { signal, timeout });
          const result = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout });
          return { protocolVersion: transport.protocolVersion ?? null, result: usableAnswer(result, 'The agent') };
        } catch (error) {
          if (signal.aborted || !(error instanceof McpError)) throw error;
          // The SDK prefixes "MCP error <code>: " to the agent's message.
          const text = error.message.replace(/^MCP error -?\d+: /, '');
          const data = (error as McpError & { data?: unknown }).data;
          return {
            protocolVersion: transport.protocolVersion ?? null,
            error: usableAnswer({ code: error.code, message: text, ...(data === undefined ? {} : { data }) }, 'The agent'),
          };
        } finally {
          // Ends the session on the agent (a DELETE, for agents that keep sessions); nothing to do if it fails.
          await transport.terminateSession().catch(() => undefined);
          await client.close().catch(() => undefined);
        }
      }),

    forward: (endpointUrl, request, call) =>
      runCall(calls, call.requestId, async ({ fetch }): Promise<ForwardedAnswer> => {
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        };
        const session = call.headers['mcp-session-id'];
        if (session) headers['mcp-session-id'] = call.ids.toAgent(session);
        const version = call.headers['mcp-protocol-version'];
        if (version) headers['mcp-protocol-version'] = version;
        const response = await fetch(endpointUrl, { method: 'POST', headers, body: JSON.stringify(request) });
        const agentSession = response.headers.get('mcp-session-id');
        const answerHeaders: Record<string, string> = agentSession ? { 'mcp-session-id': call.ids.fromAgent(agentSession) } : {};
        // A notification is accepted with 202 and no body; a request (with an id) gets its response or fails (502).
        if (response.status === 202 && request.id === undefined) return { status: 202, headers: answerHeaders };
        if (response.ok && response.body && isEventStream(response)) {
          return { status: 200, body: { stream: response.body, contentType: 'text/event-stream' }, headers: answerHeaders };
        }
        return { status: 200, body: { json: await readJsonRpcAnswer(response, request) }, headers: answerHeaders };
      }),
  };
}
