/**
 * Administration commands: `pnpm --filter collab-api cli <command>` (`node dist/cli.js`, built by
 * `pnpm build`). Prints its result on stdout and logs on stderr. Exit codes: 0 done (and --help,
 * help <command>), 1 refused or failed (bad configuration, identity already linked, ...), 2 bad
 * arguments, with one line on stderr.
 */
import { enableCompileCache } from 'node:module';
import { type Command, parseCommand, UsageError, usageErrorLine } from './cli/arguments.js';

// Later runs reuse V8's compiled code (under the OS temporary folder): most of a command's time is loading.
enableCompileCache();

let command: Command;
try {
  command = parseCommand(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`${usageErrorLine(error)}\n`);
  process.exit(2);
}
if (command.name === 'help') {
  process.stdout.write(`${command.text}\n`);
  process.exit(0);
}

// Loaded only for a command that runs: help and usage errors answer without them.
const [{ loadConfigOrExit }, { AppError }, { configSchema }, { TokenRefused }] = await Promise.all([
  import('@repo/config'),
  import('@repo/errors'),
  import('./config.js'),
  import('./cli/token.js'),
]);
const config = loadConfigOrExit(configSchema);

async function run(command: Exclude<Command, { name: 'help' }>): Promise<string> {
  if (command.name === 'token') return (await import('./cli/token.js')).token(config, command);
  const [{ bootstrap }, { createLogger }] = await Promise.all([import('./cli/bootstrap.js'), import('@repo/http')]);
  return bootstrap(config, createLogger({ service: 'collab-api-cli', level: config.LOG_LEVEL, stream: 'stderr' }), command);
}

try {
  const output = await run(command);
  process.stdout.write(`${output}\n`);
} catch (error) {
  if (!(error instanceof AppError || error instanceof TokenRefused)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
}
