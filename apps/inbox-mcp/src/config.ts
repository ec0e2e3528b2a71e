import { parseArgs } from 'node:util';
import { z } from 'zod';
import { httpSettings, setting } from '@repo/config';

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

/** `--transport`, `--host` and `--port` override MCP_TRANSPORT, HOST and PORT. */
export function environmentWithFlags(argv: string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { values } = parseArgs({
    args: argv,
    options: { transport: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' } },
    strict: true,
  });
  return {
    ...env,
    ...(values.transport !== undefined && { MCP_TRANSPORT: values.transport }),
    ...(values.host !== undefined && { HOST: values.host }),
    ...(values.port !== undefined && { PORT: values.port }),
  };
}
