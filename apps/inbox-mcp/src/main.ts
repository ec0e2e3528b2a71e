#!/usr/bin/env node
import path from 'node:path';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { generatedSecret, loadConfigOrExit } from '@repo/config';
import { createLogger, createMetrics, serve } from '@repo/http';
import { jsonRpcErrorFormat } from './json-rpc-errors.js';
import { InboxApiClient } from './api-client.js';
import { type CommandLine, isLoopback, parseCommandLine, serviceConfigSchema, USAGE, UsageError } from './config.js';
import { buildHttpApp } from './http-app.js';
import { createMcpServer, type ServerReach } from './mcp-server.js';
import { appRoot } from './paths.js';
import { taskKeyFrom } from './tasks/task-id.js';

let commandLine: CommandLine;
try {
  commandLine = parseCommandLine(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  // One line, as a shell user expects of a mistyped flag, and the exit code of a usage error.
  process.stderr.write(`inbox-mcp: ${error.message} (${USAGE})\n`);
  process.exit(2);
}
const config = loadConfigOrExit(serviceConfigSchema, commandLine.env);
// Over stdio, stdout carries the protocol: logs go to stderr.
const logger = createLogger({
  service: 'inbox-mcp',
  level: config.LOG_LEVEL,
  stream: config.MCP_TRANSPORT === 'stdio' ? 'stderr' : 'stdout',
});
const { allowAnonymous } = commandLine;
logger.info(
  {
    api: config.SERVICE_API_URL,
    apiKey: config.SERVICE_API_KEY ? 'set' : 'unset',
    transport: config.MCP_TRANSPORT,
    ...(config.MCP_TRANSPORT !== 'stdio' && { callers: allowAnonymous ? 'key, or none (--allow-anonymous)' : 'key required' }),
  },
  'starting',
);
if (config.MCP_TRANSPORT !== 'stdio' && allowAnonymous && !isLoopback(config.HOST)) {
  logger.warn({ host: config.HOST }, '--allow-anonymous beyond loopback: whoever reaches this server acts with SERVICE_API_KEY');
}

const api = new InboxApiClient({ baseUrl: config.SERVICE_API_URL, apiKey: config.SERVICE_API_KEY });
const taskKey = taskKeyFrom(config.INBOX_MCP_TASK_KEY ?? (await generatedTaskKey()));
const createServer = (client: InboxApiClient, reach?: ServerReach) => createMcpServer({ api: client, logger, taskKey }, reach);

/** Development without INBOX_MCP_TASK_KEY: a key kept in the app's folder, shared by its processes there. */
async function generatedTaskKey(): Promise<string> {
  const file = path.join(appRoot, '.data', 'task-key');
  logger.warn(
    { file },
    'INBOX_MCP_TASK_KEY is not set: task ids are sealed with a key generated in this file; replicas elsewhere need INBOX_MCP_TASK_KEY',
  );
  return generatedSecret(file);
}

if (config.MCP_TRANSPORT === 'stdio') {
  // Both eras: the first message (`initialize`, or a 2026-07-28 request) picks the connection's.
  serveStdio(() => createServer(api), { onerror: (error) => logger.warn({ err: error }, 'stdio') });
} else {
  const app = buildHttpApp({
    transport: config.MCP_TRANSPORT,
    createServer,
    api,
    allowAnonymous,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    logger,
    metrics: createMetrics({ service: 'inbox-mcp' }),
    allowedHosts: config.MCP_ALLOWED_HOSTS,
    host: config.HOST,
    trustProxyHops: config.TRUST_PROXY_HOPS,
  });
  await serve(app, {
    port: config.PORT,
    host: config.HOST,
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    handleSignals: true,
    errorFormat: jsonRpcErrorFormat,
  });
}
