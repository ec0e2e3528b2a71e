import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { inboxSchema } from '../api-schemas.js';
import type { ServerDeps } from '../mcp-server.js';
import { runTool, structuredResult } from './results.js';

const createInboxInput = z.strictObject({
  name: z.string().describe('Display name of the inbox, shown as the sender name, e.g. "Support agent"'),
  username: z
    .string()
    .describe('Local part of the address (before the @), e.g. "support"; letters, digits and . _ - +; stored lower-case'),
});

export function registerInboxTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    'create_inbox',
    {
      title: 'Create inbox',
      description:
        'Create a new e-mail inbox that you can send from and receive at. Its address is `<username>@<the service mail domain>`. ' +
        'Returns the inbox `id` (a UUID) that the other tools take as `inbox_id`, and its `email_address`. ' +
        'Fails with code `conflict` when the address is taken: choose another username.',
      inputSchema: createInboxInput,
      outputSchema: inboxSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args, ctx) =>
      runTool({ logger: deps.logger, tool: 'create_inbox', signal: ctx.mcpReq.signal }, async () =>
        structuredResult(await deps.api.createInbox({ name: args.name, email_username: args.username }, ctx.mcpReq)),
      ),
  );
}
