/**
 * Real agents for the tests, on 127.0.0.1: A2A agents built with @a2a-js/sdk's server side (one
 * speaking A2A 1.0, one speaking only 0.3 through the SDK's compat entry points) and an MCP
 * server built with the MCP SDK. Each records the requests it received.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard, Message, Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, { type Express } from 'express';
import { z } from 'zod';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body: a JSON-RPC request, for the calls of interest. */
  body: { method?: string; id?: unknown; params?: Record<string, unknown> } & Record<string, unknown>;
}

export interface TestAgent {
  /** The endpoint_url to register. */
  url: string;
  /** Every request received, in order. */
  requests: SeenRequest[];
  close(): Promise<void>;
}

async function listen(app: Express): Promise<{ server: Server; base: string }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function stop(server: Server): Promise<void> {
  for (const release of held) release();
  held.clear();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function recorder(requests: SeenRequest[]): express.RequestHandler[] {
  return [
    express.json(),
    (req, _res, next) => {
      requests.push({ method: req.method, path: req.path, headers: req.headers, body: req.body ?? {} });
      next();
    },
  ];
}

/**
 * The `slow` answers: held until their server closes, so that they come after any timeout of the
 * caller however busy the machine (a fixed sleep could end first).
 */
const held = new Set<() => void>();
const holdUntilClosed = () => new Promise<void>((resolve) => held.add(resolve));

/**
 * Echoes the text it is sent. `task ...` starts a task, which waits for more input; a message
 * naming that task completes it (`turn 2`). `slow` answers once the server closes; `large <n>`
 * answers a text of n characters.
 */
class EchoExecutor implements AgentExecutor {
  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const text = context.userMessage.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
    if (text === 'slow') await holdUntilClosed();
    const large = /^large (\d+)$/.exec(text);
    if (large) {
      bus.publish(
        AgentEvent.message(
          Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'x'.repeat(Number(large[1])) }] }),
        ),
      );
    } else if (context.task || text.startsWith('task')) {
      const turn = (context.task?.history.length ?? 0) + 1;
      bus.publish(
        AgentEvent.task(
          Task.fromJSON({
            id: context.taskId,
            contextId: context.contextId,
            status: {
              state: turn === 1 ? 'TASK_STATE_INPUT_REQUIRED' : 'TASK_STATE_COMPLETED',
              timestamp: new Date().toISOString(),
            },
            artifacts: [{ artifactId: `turn-${turn}`, parts: [{ text: `echo: ${text} (turn ${turn})` }] }],
            history: [
              ...(context.task?.history.map((message) => Message.toJSON(message)) ?? []),
              Message.toJSON(context.userMessage),
            ],
          }),
        ),
      );
    } else {
      bus.publish(
        AgentEvent.message(
          Message.fromJSON({
            messageId: randomUUID(),
            contextId: context.contextId,
            role: 'ROLE_AGENT',
            parts: [{ text: `echo: ${text}` }],
          }),
        ),
      );
    }
    bus.finished();
  }

  cancelTask(): Promise<void> {
    return Promise.resolve();
  }
}

function echoCard(name: string, url: string, protocolVersion: string): AgentCard {
  return AgentCard.fromJSON({
    name,
    description: 'Echoes what it is sent',
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion }],
    capabilities: { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes text', tags: ['echo'] }],
  });
}

/** An A2A 1.0 agent: its card lists a 1.0 JSON-RPC interface, and it takes `SendMessage`. */
export async function startA2aAgent(): Promise<TestAgent> {
  const app = express();
  const requests: SeenRequest[] = [];
  app.use(recorder(requests));
  const { server, base } = await listen(app);
  const handler = new DefaultRequestHandler(
    echoCard('Echo 1.0', `${base}/a2a/jsonrpc`, '1.0'),
    new InMemoryTaskStore(),
    new EchoExecutor(),
  );
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { url: base, requests, close: () => stop(server) };
}

/**
 * An A2A 0.3 agent: a card as 0.3 agents publish it (`url`, `protocolVersion` 0.3.0, no
 * `supportedInterfaces`), and 0.3's JSON-RPC methods only, through the SDK's compat entry point,
 * whatever version a request claims.
 */
export async function startA2aV03Agent(): Promise<TestAgent> {
  const app = express();
  const requests: SeenRequest[] = [];
  app.use(recorder(requests));
  app.use((req, _res, next) => {
    req.headers['a2a-version'] = '0.3';
    next();
  });
  const { server, base } = await listen(app);
  const handler = new DefaultRequestHandler(
    echoCard('Echo 0.3', `${base}/a2a/jsonrpc`, '0.3'),
    new InMemoryTaskStore(),
    new EchoExecutor(),
  );
  // Registered with a path: its card is under it.
  app.get('/agents/v03/.well-known/agent-card.json', (_req, res) => {
    res.json({
      protocolVersion: '0.3.0',
      name: 'Echo 0.3',
      description: 'Echoes what it is sent',
      url: `${base}/a2a/jsonrpc`,
      preferredTransport: 'JSONRPC',
      version: '1.0.0',
      capabilities: { streaming: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'echo', name: 'Echo', description: 'Echoes text', tags: ['echo'] }],
    });
  });
  app.use(
    '/a2a/jsonrpc',
    jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }),
  );
  return { url: `${base}/agents/v03`, requests, close: () => stop(server) };
}

/**
 * An MCP server over streamable HTTP that keeps sessions, with tools `echo` ({text}), `slow`
 * (answers once the server closes), `large` ({characters}: a text of that many) and `chatty`
 * ({notifications, characters}: that many log messages of that many characters on the answer's
 * event stream first, then `done`).
 */
export async function startMcpAgent(): Promise<TestAgent & { sessions: () => string[] }> {
  const app = express();
  const requests: SeenRequest[] = [];
  app.use(recorder(requests));
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const newServer = () => {
    const server = new McpServer({ name: 'echo-mcp', version: '1.0.0' }, { capabilities: { logging: {} } });
    server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, ({ text }) => ({
      content: [{ type: 'text', text: `echo: ${text}` }],
    }));
    server.registerTool('slow', { description: 'Answers once the server closes' }, async () => {
      await holdUntilClosed();
      return { content: [{ type: 'text', text: 'late' }] };
    });
    server.registerTool(
      'large',
      { description: 'Answers a text of `characters` characters', inputSchema: { characters: z.number().int() } },
      ({ characters }) => ({ content: [{ type: 'text', text: 'x'.repeat(characters) }] }),
    );
    server.registerTool(
      'chatty',
      {
        description: 'Logs `notifications` messages of `characters` characters, then answers',
        inputSchema: { notifications: z.number().int(), characters: z.number().int() },
      },
      async ({ notifications, characters }, extra) => {
        for (let sent = 0; sent < notifications; sent++) {
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level: 'info', data: 'x'.repeat(characters) },
          });
        }
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
    return server;
  };
  app.post('/mcp', async (req, res) => {
    const sessionId = req.get('mcp-session-id');
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId) {
        res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, transport!);
        },
        onsessionclosed: (id) => {
          transports.delete(id);
        },
      });
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  app.delete('/mcp', async (req, res) => {
    const transport = transports.get(req.get('mcp-session-id') ?? '');
    if (!transport) {
      res.status(404).end();
      return;
    }
    await transport.handleRequest(req, res);
  });
  const { server, base } = await listen(app);
  return { url: `${base}/mcp`, requests, sessions: () => [...transports.keys()], close: () => stop(server) };
}

/** A server that answers every request with a redirect to `location`. */
export async function startRedirect(location: string): Promise<TestAgent> {
  const app = express();
  const requests: SeenRequest[] = [];
  app.use(recorder(requests));
  app.use((_req, res) => {
    res.redirect(302, location);
  });
  const { server, base } = await listen(app);
  return { url: base, requests, close: () => stop(server) };
}

export interface ScriptedAgent extends TestAgent {
  /** What its card's GET answers (JSON): an A2A 1.0 card whose JSON-RPC interface is its `/rpc`, unless a test sets another. */
  card: () => unknown;
  /** Answers every request but the card's (A2A's `/rpc`, or an MCP agent's endpoint): a test sets it. */
  answer: express.RequestHandler;
}

/** An agent that answers as the test says, for answers no SDK's server gives (too large, endless, to another request). */
export async function startScriptedAgent(): Promise<ScriptedAgent> {
  const app = express();
  const requests: SeenRequest[] = [];
  app.use(recorder(requests));
  const { server, base } = await listen(app);
  const agent: ScriptedAgent = {
    url: base,
    requests,
    card: () => AgentCard.toJSON(echoCard('Scripted', `${base}/rpc`, '1.0')),
    answer: (_req, res) => {
      res.status(501).end();
    },
    close: () => stop(server),
  };
  app.get('/.well-known/agent-card.json', (_req, res) => {
    res.type('application/json').send(JSON.stringify(agent.card()));
  });
  app.use((req, res, next) => agent.answer(req, res, next));
  return agent;
}
