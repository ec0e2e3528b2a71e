import { parseArgs } from 'node:util';
import { z } from 'zod';
import { displayName, email } from '../shared/schemas.js';

const COMMAND_USAGE = {
  bootstrap: `usage: cli bootstrap --tenant-name NAME --admin-email EMAIL --admin-sub SUB [--admin-name NAME]

Creates a tenant with its first Org admin, linked to the identity SUB, and prints
{"tenant_id": "...", "user_id": "..."}. --admin-name defaults to the e-mail.`,
  token: `usage: cli token --sub SUB [--email EMAIL] [--platform-admin] [--ttl SECONDS]

Prints an HS256 token for SUB signed with COLLAB_JWT_SECRET (or the development secret under
DATA_DIR); refused when COLLAB_JWKS_URL is set. --platform-admin: may create, list and delete tenants.`,
} as const;

export const USAGE = `usage: cli <command> [options]     (cli help <command>, or <command> --help: its options)

commands:
  bootstrap  creates a tenant with its first Org admin, linked to an identity
  token      prints a token for an identity, signed with the local secret

Exit codes: 0 done, 1 refused or failed, 2 bad arguments.`;

/** Arguments that do not make a command; the message says which. */
export class UsageError extends Error {}

export type Command =
  | { name: 'help'; text: string }
  | { name: 'bootstrap'; tenantName: string; adminEmail: string; adminName: string; adminSub: string }
  | { name: 'token'; sub: string; email?: string; platformAdmin: boolean; ttlSeconds?: number };

const bootstrapArguments = z.object({
  'tenant-name': displayName(),
  'admin-email': email,
  'admin-sub': z.string().min(1),
  'admin-name': displayName().optional(),
});

const tokenArguments = z.object({
  sub: z.string().min(1),
  email: email.optional(),
  'platform-admin': z.boolean().default(false),
  ttl: z
    .string()
    .regex(/^[1-9]\d{0,8}$/, 'must be a whole number of seconds')
    .transform(Number)
    .optional(),
});

/** The command that `argv` (without node and the script) asks for. */
export function parseCommand(argv: string[]): Command {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError('no command given');
  if (name === '--help' || name === '-h' || (name === 'help' && rest.length === 0)) return { name: 'help', text: USAGE };
  if (name === 'help') {
    const [topic, ...extra] = rest;
    if (extra.length > 0) throw new UsageError(`help takes one command (got ${rest.length})`);
    return { name: 'help', text: commandUsage(topic!) };
  }
  if (rest.includes('--help') || rest.includes('-h')) return { name: 'help', text: commandUsage(name) };
  if (name === 'bootstrap') {
    const values = parse(bootstrapArguments, rest, {
      'tenant-name': { type: 'string' },
      'admin-email': { type: 'string' },
      'admin-sub': { type: 'string' },
      'admin-name': { type: 'string' },
    });
    return {
      name,
      tenantName: values['tenant-name'],
      adminEmail: values['admin-email'],
      adminSub: values['admin-sub'],
      // The API requires a name; the e-mail stands in until the admin sets one.
      adminName: values['admin-name'] ?? values['admin-email'],
    };
  }
  if (name === 'token') {
    const values = parse(tokenArguments, rest, {
      sub: { type: 'string' },
      email: { type: 'string' },
      'platform-admin': { type: 'boolean' },
      ttl: { type: 'string' },
    });
    return { name, sub: values.sub, email: values.email, platformAdmin: values['platform-admin'], ttlSeconds: values.ttl };
  }
  throw new UsageError(`unknown command ${JSON.stringify(name)}`);
}

function commandUsage(name: string): string {
  if (name === 'bootstrap' || name === 'token') return COMMAND_USAGE[name];
  throw new UsageError(`unknown command ${JSON.stringify(name)}`);
}

/** The one line that bad arguments get on stderr. */
export function usageErrorLine(error: UsageError): string {
  return `cli: ${error.message} (cli --help prints the usage)`;
}

function parse<S extends z.ZodType>(
  schema: S,
  args: string[],
  options: NonNullable<Parameters<typeof parseArgs>[0]>['options'],
): z.output<S> {
  let values: unknown;
  try {
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const result = schema.safeParse(values, { reportInput: true });
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const option = String(issue?.path[0] ?? '');
  throw new UsageError(
    issue?.code === 'invalid_type' && issue.input === undefined
      ? `--${option} is required`
      : `--${option} ${issue?.message ?? 'is invalid'}`,
  );
}
