import { parseArgs } from 'node:util';
import { z } from 'zod';
import { configProblems, httpSettings, setting } from '@repo/config';

export const TRANSPORTS = ['stdio', 'sse', 'http'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Every environment variable inbox-mcp reads. The README's configuration table mirrors this. */
export const configSchema = z.object({
  ...httpSettings({ port: 8200 }),
  MCP_TRANSPORT: setting
    .oneOf(TRANSPORTS)
    .default('stdio')
    .describe(
      'stdio for desktop clients, sse for legacy web clients, http (streamable, stateless) for deployments. `--transport` overrides it.',
    ),
  MCP_ALLOWED_HOSTS: setting
    .list()
    .optional()
    .describe(
      "Host headers accepted by the network transports, and the hosts a browser's Origin header may name (DNS-rebinding protection). Unset: localhost names when bound to loopback; otherwise any Host, and an Origin of that Host only.",
    ),
  PUBLIC_BASE_URL: setting
    .url()
    .optional()
    .describe(
      'The URL clients reach this server at (behind a load balancer, its public one): names the resource in `/.well-known/oauth-protected-resource` and in the 401 challenge. Unset: taken from each request (Host, and X-Forwarded-Proto/-Host within TRUST_PROXY_HOPS).',
    ),
  SERVICE_API_URL: setting.url().default('http://127.0.0.1:8000').describe("inbox-api's base URL."),
  SERVICE_API_KEY: setting
    .string()
    .optional()
    .describe(
      'Sent to inbox-api as `Authorization: Bearer <key>` over stdio, and for callers without a key of sse/http when started with `--allow-anonymous`. Other network callers send their own key.',
    ),
  INBOX_MCP_TASK_KEY: setting
    .string()
    .optional()
    .describe(
      "Secret that seals the ids of `wait_for_reply` tasks (AES-256-GCM; any string, e.g. `openssl rand -base64 32`). Every replica needs the same one, or tasks created on one cannot be read on another. Unset: a key generated in `.data/task-key` in the app's folder (development).",
    ),
});

export type Config = z.output<typeof configSchema>;

/** Whether an address to listen on is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  return ['127.0.0.1', 'localhost', '::1'].includes(host);
}

/**
 * The settings as the service loads them: a deployment (sse or http reachable beyond this machine,
 * as behind a load balancer) must name its task key, since a key generated on one replica's disk
 * cannot open the tasks another made. Development falls back to a generated key.
 */
export const serviceConfigSchema = configSchema.superRefine((config, ctx) => {
  if (config.MCP_TRANSPORT !== 'stdio' && !isLoopback(config.HOST) && config.INBOX_MCP_TASK_KEY === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['INBOX_MCP_TASK_KEY'],
      message: `is required when HOST is not a loopback address (${config.HOST}): every replica needs the same key`,
    });
  }
});

export const USAGE = 'usage: inbox-mcp [--transport stdio|sse|http] [--host HOST] [--port PORT] [--allow-anonymous]';

/** Command-line arguments that are not the flags below; the message says which, in one line. */
export class UsageError extends Error {}

// Each flag that takes a value, and the setting it overrides.
const FLAGS = new Map<string, keyof Config>([
  ['transport', 'MCP_TRANSPORT'],
  ['host', 'HOST'],
  ['port', 'PORT'],
]);
const flagSettings = configSchema.pick({ MCP_TRANSPORT: true, HOST: true, PORT: true });

// A switch, and deliberately no environment variable: an .env file or a ConfigMap copied into a
// deployment must not open the network transports to callers without a key.
const ALLOW_ANONYMOUS = 'allow-anonymous';

export interface CommandLine {
  /** The environment with the flags' settings laid over it. */
  env: NodeJS.ProcessEnv;
  /** `--allow-anonymous`: sse/http callers without a key act with SERVICE_API_KEY. */
  allowAnonymous: boolean;
}

/**
 * `--transport`, `--host` and `--port` (also as `--port=9000`) override MCP_TRANSPORT, HOST and
 * PORT; `--allow-anonymous` takes no value. A `--` among them is passed over: npm scripts take
 * flags that way (`pnpm start -- --port 9000` runs the script with `-- --port 9000`). An unknown
 * flag, a positional argument, a flag without its value (or with one, for the switch) or a value
 * its setting refuses is a UsageError naming the flag.
 */
export function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv): CommandLine {
  const { tokens } = parseArgs({
    args: argv.filter((arg) => arg !== '--'),
    options: {
      ...Object.fromEntries([...FLAGS.keys()].map((flag) => [flag, { type: 'string' as const }])),
      [ALLOW_ANONYMOUS]: { type: 'boolean' },
    },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const overrides: Record<string, string> = {};
  let allowAnonymous = false;
  for (const token of tokens) {
    if (token.kind === 'positional') throw new UsageError(`unexpected argument ${JSON.stringify(token.value)}`);
    if (token.kind !== 'option') continue;
    if (token.name === ALLOW_ANONYMOUS) {
      if (token.inlineValue) throw new UsageError(`${token.rawName} takes no value`);
      allowAnonymous = true;
      continue;
    }
    const setting = FLAGS.get(token.name);
    if (setting === undefined) throw new UsageError(`unknown option ${token.rawName}`);
    if (!token.value) throw new UsageError(`${token.rawName} needs a value`);
    // The setting's own check, its name ("PORT must be ...") replaced by the flag's.
    const [problem] = configProblems(flagSettings, { [setting]: token.value });
    if (problem !== undefined) throw new UsageError(`--${token.name}${problem.slice(setting.length)}`);
    overrides[setting] = token.value;
  }
  return { env: { ...env, ...overrides }, allowAnonymous };
}
