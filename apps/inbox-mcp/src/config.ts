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
      'Host headers accepted by the network transports (DNS-rebinding protection). Unset: localhost names when bound to loopback, any otherwise.',
    ),
  SERVICE_API_URL: setting.url().default('http://127.0.0.1:8000').describe("inbox-api's base URL."),
  SERVICE_API_KEY: setting.string().optional().describe('Sent to inbox-api as `Authorization: Bearer <key>`.'),
});

export type Config = z.output<typeof configSchema>;

export const USAGE = 'usage: inbox-mcp [--transport stdio|sse|http] [--host HOST] [--port PORT]';

/** Command-line arguments that are not the flags below; the message says which, in one line. */
export class UsageError extends Error {}

// Each flag and the setting it overrides.
const FLAGS = new Map<string, keyof Config>([
  ['transport', 'MCP_TRANSPORT'],
  ['host', 'HOST'],
  ['port', 'PORT'],
]);
const flagSettings = configSchema.pick({ MCP_TRANSPORT: true, HOST: true, PORT: true });

/**
 * `--transport`, `--host` and `--port` (also as `--port=9000`) override MCP_TRANSPORT, HOST and
 * PORT. A `--` among them is passed over: npm scripts take flags that way (`pnpm start -- --port
 * 9000` runs the script with `-- --port 9000`). An unknown flag, a positional argument, a flag
 * without its value or a value its setting refuses is a UsageError naming the flag.
 */
export function environmentWithFlags(argv: string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { tokens } = parseArgs({
    args: argv.filter((arg) => arg !== '--'),
    options: Object.fromEntries([...FLAGS.keys()].map((flag) => [flag, { type: 'string' as const }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const overrides: Record<string, string> = {};
  for (const token of tokens) {
    if (token.kind === 'positional') throw new UsageError(`unexpected argument ${JSON.stringify(token.value)}`);
    if (token.kind !== 'option') continue;
    const setting = FLAGS.get(token.name);
    if (setting === undefined) throw new UsageError(`unknown option ${token.rawName}`);
    if (!token.value) throw new UsageError(`${token.rawName} needs a value`);
    // The setting's own check, its name ("PORT must be ...") replaced by the flag's.
    const [problem] = configProblems(flagSettings, { [setting]: token.value });
    if (problem !== undefined) throw new UsageError(`--${token.name}${problem.slice(setting.length)}`);
    overrides[setting] = token.value;
  }
  return { ...env, ...overrides };
}
