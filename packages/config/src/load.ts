import { type z } from 'zod';
import { redactUrl } from './redact.js';

/** A configuration that cannot be used; each problem names its variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

// Values of these are never echoed in error messages.
const SECRET_NAME = /SECRET|TOKEN|PASSWORD|KEY|CREDENTIAL/i;

/**
 * Reads and validates environment variables against a schema built from the `setting`
 * helpers. Empty strings count as unset, so an empty ConfigMap entry means "use the default".
 */
export function loadConfig<S extends z.ZodType<object>>(schema: S, env: Env = process.env): z.output<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => describe(issue, present)));
}

function describe(issue: z.core.$ZodIssue, env: Env): string {
  const variable = String(issue.path[0] ?? 'configuration');
  const raw = env[variable];
  const got =
    raw === undefined
      ? ''
      : SECRET_NAME.test(variable)
        ? ' (value hidden)'
        : ` (got ${JSON.stringify(truncate(redactUrl(raw)))})`;
  return `${variable} ${issue.message}${got}`;
}

function truncate(value: string): string {
  return value.length > 60 ? `${value.slice(0, 57)}...` : value;
}

/** One line per bad variable of a configuration; none when it is valid. */
export function configProblems<S extends z.ZodType<object>>(schema: S, env: Env): string[] {
  try {
    loadConfig(schema, env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

/**
 * For a service's entry point: returns the configuration, or prints one line per bad
 * variable and stops the process.
 */
export function loadConfigOrExit<S extends z.ZodType<object>>(schema: S, env: Env = process.env): z.output<S> {
  try {
    return loadConfig(schema, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) process.stderr.write(`Invalid configuration: ${problem}\n`);
    process.exit(1);
  }
}
