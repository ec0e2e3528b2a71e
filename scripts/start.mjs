// `pnpm start`: builds what changed (turbo's cache: after scripts/setup.sh, nothing), then runs the three
// services side by side with their output prefixed, says when all three answer /health, and on Ctrl-C
// (or SIGTERM) waits for each to stop gracefully and says so. Plain JavaScript, so that nothing is
// compiled to start it.
//
//   pnpm start [-- --allow-anonymous]
//
// INBOX_API_PORT, COLLAB_API_PORT and INBOX_MCP_PORT choose the ports (8000, 8100, 8200); inbox-mcp
// is pointed at the inbox-api started here. `--allow-anonymous` is passed to inbox-mcp: callers without
// a key then act with SERVICE_API_KEY (none: inbox-api's open mode, when it has no INBOX_API_KEYS).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const usage = 'usage: pnpm start [-- --allow-anonymous]   (ports: INBOX_API_PORT, COLLAB_API_PORT, INBOX_MCP_PORT)';

const args = process.argv.slice(2).filter((arg) => arg !== '--');
if (args.includes('--help') || args.includes('-h')) {
  console.log(usage);
  process.exit(0);
}
const unknown = args.find((arg) => arg !== '--allow-anonymous');
if (unknown !== undefined) {
  console.error(`pnpm start: unknown argument ${JSON.stringify(unknown)}; ${usage}`);
  process.exit(2);
}

/** A port variable's value: 1 to 65535 (not 0, "any free port": inbox-mcp must know inbox-api's). */
function port(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > 65535) {
    console.error(`Invalid configuration: ${name} must be an integer from 1 to 65535 (got ${JSON.stringify(raw)})`);
    process.exit(1);
  }
  return value;
}

const ports = {
  'inbox-api': port('INBOX_API_PORT', 8000),
  'collab-api': port('COLLAB_API_PORT', 8100),
  'inbox-mcp': port('INBOX_MCP_PORT', 8200),
};
if (new Set(Object.values(ports)).size < 3) {
  console.error(
    `Invalid configuration: INBOX_API_PORT, COLLAB_API_PORT and INBOX_MCP_PORT must differ (got ${Object.values(ports).join(', ')})`,
  );
  process.exit(1);
}
// The address the services are reached at from here: HOST when it names one, else loopback.
const host = !process.env.HOST || ['0.0.0.0', '::'].includes(process.env.HOST) ? '127.0.0.1' : process.env.HOST;
const base = (name) => `http://${host.includes(':') ? `[${host}]` : host}:${ports[name]}`;

const turboEnv = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' };
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);

// Build: with everything cached this takes a fraction of a second, and prints nothing unless it fails.
const build = await new Promise((resolve) => {
  const turbo = spawn(
    path.join(root, 'node_modules/.bin/turbo'),
    ['run', 'build', '--filter=./apps/*', '--output-logs=errors-only'],
    {
      cwd: root,
      env: turboEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  turbo.stdout.on('data', (chunk) => (output += chunk));
  turbo.stderr.on('data', (chunk) => (output += chunk));
  turbo.on('close', (code) => resolve({ code, output }));
});
if (build.code !== 0) {
  process.stderr.write(build.output);
  console.error(`pnpm start: the build failed (exit ${build.code}); nothing was started`);
  process.exit(1);
}
const cached = /Cached:\s+(\d+) cached, (\d+) total/.exec(build.output);
console.log(`Built in ${seconds()} s${cached ? ` (${cached[1]} of ${cached[2]} tasks from turbo's cache)` : ''}`);

// Each app's own `start` script names its command, after the build it makes when there is none
// (`[ -f dist/server.js ] || turbo run build ... && exec node ... dist/server.js`); this script built already.
function command(app) {
  const script = JSON.parse(readFileSync(path.join(root, 'apps', app, 'package.json'), 'utf8')).scripts.start;
  const words = script
    .split(' && ')
    .at(-1)
    .replace(/^exec /, '')
    .split(' ');
  if (words[0] !== 'node') throw new Error(`apps/${app}'s start script does not run node: ${script}`);
  return words.slice(1);
}

const services = [
  { name: 'inbox-api', env: {} },
  { name: 'collab-api', env: {} },
  { name: 'inbox-mcp', env: { SERVICE_API_URL: base('inbox-api') }, extra: args },
];
const width = Math.max(...services.map((service) => service.name.length));
let stopping = false;
let failed = false;

const children = services.map((service) => {
  const child = spawn(process.execPath, [...command(service.name), ...(service.extra ?? [])], {
    cwd: path.join(root, 'apps', service.name),
    env: {
      // Later starts reuse V8's compiled code: much of a start is loading modules.
      NODE_COMPILE_CACHE: path.join(root, 'node_modules/.cache/node-compile-cache'),
      ...process.env,
      ...service.env,
      PORT: String(ports[service.name]),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => console.log(`${service.name.padEnd(width)} | ${line}`));
  }
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      if (code !== 0 && !(stopping && signal !== null)) failed = true;
      if (!stopping) {
        console.error(`${service.name} exited (${signal ?? `code ${code}`}); stopping the others`);
        stop('SIGTERM');
      }
      resolve();
    }),
  );
  return { ...service, child, exited };
});

function stop(signal) {
  if (stopping) return;
  stopping = true;
  // Ctrl-C in a terminal has already signalled every child (one process group); a service takes a
  // repeated signal as the same request to stop.
  for (const { child } of children) if (child.exitCode === null) child.kill(signal);
}
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

async function answers(url) {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}
(async () => {
  const waiting = new Set(services.map((service) => service.name));
  while (waiting.size > 0 && !stopping) {
    for (const name of [...waiting]) if (await answers(`${base(name)}/health`)) waiting.delete(name);
    if (waiting.size > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (stopping) return;
  console.log(
    `Ready in ${seconds()} s: inbox-api ${base('inbox-api')}, collab-api ${base('collab-api')}, ` +
      `inbox-mcp ${base('inbox-mcp')}/mcp${args.includes('--allow-anonymous') ? ' (callers without a key allowed)' : ''}. Ctrl-C stops them.`,
  );
})();

await Promise.all(children.map((each) => each.exited));
if (failed) {
  console.error('Stopped: a service failed (above).');
  process.exit(1);
}
console.log('Stopped inbox-api, collab-api and inbox-mcp.');
process.exit(0);
