/**
 * Administration commands: `pnpm --filter collab-api cli <command>` (or `node dist/cli.js`).
 * Prints its result on stdout and logs on stderr. Exit codes: 0 done, 1 refused or failed
 * (bad configuration, identity already linked, ...), 2 bad arguments.
 */
import { loadConfigOrExit } from '@repo/config';
import { AppError } from '@repo/errors';
import { createLogger } from '@repo/http';
import { type Command, parseCommand, USAGE, UsageError } from './cli/arguments.js';
import { bootstrap } from './cli/bootstrap.js';
import { token, TokenRefused } from './cli/token.js';
import { configSchema } from './config.js';

let command: Command;
try {
  command = parseCommand(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`${error.message}\n${USAGE}\n`);
  process.exit(2);
}

const config = loadConfigOrExit(configSchema);
const logger = createLogger({ service: 'collab-api-cli', level: config.LOG_LEVEL, stream: 'stderr' });

try {
  const output = command.name === 'bootstrap' ? await bootstrap(config, logger, command) : await token(config, command);
  process.stdout.write(`${output}\n`);
} catch (error) {
  if (!(error instanceof AppError || error instanceof TokenRefused)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
}
