/**
 * The MCP project's own conformance suite (@modelcontextprotocol/conformance, `server` mode)
 * against inbox-mcp's real entry point on streamable HTTP, backed by a real inbox-api, twice: the
 * published suite (0.1.x) for protocol 2025-11-25, and its 0.2.0 pre-release (installed as
 * `conformance-next`) for 2026-07-28, against the same endpoint. Every server scenario of each
 * suite is either run here or skipped for a reason written below (and in the README), so a
 * scenario a new version of a suite adds fails this test until it is classified.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startService } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { type InboxApi, startInboxApi } from './support/inbox-api.js';

jest.setTimeout(120_000);

const RUN = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'];

const FIXTURE_TOOL = "calls a fixture tool of the suite's reference server, which this server does not have";
const SKIPPED: Record<string, string> = {
  'logging-set-level': 'the server sends no log messages, so it declares no logging capability',
  'completion-complete': 'completes an argument of a prompt; the server has no prompts',
  'prompts-list': 'the server has no prompts',
  'prompts-get-simple': 'the server has no prompts',
  'prompts-get-with-args': 'the server has no prompts',
  'prompts-get-embedded-resource': 'the server has no prompts',
  'prompts-get-with-image': 'the server has no prompts',
  'tools-call-simple-text': FIXTURE_TOOL,
  'tools-call-image': FIXTURE_TOOL,
  'tools-call-audio': FIXTURE_TOOL,
  'tools-call-embedded-resource': FIXTURE_TOOL,
  'tools-call-mixed-content': FIXTURE_TOOL,
  'tools-call-with-logging': FIXTURE_TOOL,
  'tools-call-error': FIXTURE_TOOL,
  'tools-call-with-progress': FIXTURE_TOOL,
  'tools-call-sampling': FIXTURE_TOOL,
  'tools-call-elicitation': FIXTURE_TOOL,
  'json-schema-2020-12': FIXTURE_TOOL,
  'elicitation-sep1034-defaults': FIXTURE_TOOL,
  'elicitation-sep1330-enums': FIXTURE_TOOL,
  'server-sse-polling': FIXTURE_TOOL,
  'resources-read-text': "reads a fixture resource (test://...) of the suite's reference server",
  'resources-read-binary': "reads a fixture resource (test://...) of the suite's reference server",
  'resources-templates-read': "reads a fixture resource template (test://...) of the suite's reference server",
  'resources-subscribe':
    'resource subscriptions: the spec makes the resources read-only, and a stateless server cannot push updates',
  'resources-unsubscribe':
    'resource subscriptions: the spec makes the resources read-only, and a stateless server cannot push updates',
  'server-sse-multiple-streams':
    'needs a session id; the stateless server issues none (the scenario ends with a warning and no check)',
};

/** Scenarios of the 0.2.0 pre-release for 2026-07-28 (`list --server --spec-version 2026-07-28`). */
const RUN_2026 = [
  'server-stateless',
  'tools-list',
  'resources-list',
  'sep-2164-resource-not-found',
  'dns-rebinding-protection',
  'caching',
  'http-header-validation',
];
const NO_INPUT = 'multi-round-trip input (elicitation, sampling, roots): no tool of this server asks the client for input';
const SKIPPED_2026: Record<string, string> = {
  ...Object.fromEntries(
    [
      'completion-complete',
      'prompts-list',
      'prompts-get-simple',
      'prompts-get-with-args',
      'prompts-get-embedded-resource',
      'prompts-get-with-image',
    ].map((scenario) => [scenario, SKIPPED[scenario]]),
  ),
  ...Object.fromEntries(
    [
      'tools-call-simple-text',
      'tools-call-image',
      'tools-call-audio',
      'tools-call-embedded-resource',
      'tools-call-mixed-content',
      'tools-call-error',
      'tools-call-with-progress',
      'json-schema-2020-12',
      'resources-read-text',
      'resources-read-binary',
      'resources-templates-read',
    ].map((scenario) => [scenario, SKIPPED[scenario]]),
  ),
  'server-sse-multiple-streams': 'a 2026-07-28 server has no standalone stream to open several of',
  'http-custom-header-server-validation':
    'no tool of this server declares x-mcp-header parameters (the scenario has nothing to check)',
  ...Object.fromEntries(
    [
      'input-required-result-basic-elicitation',
      'input-required-result-basic-sampling',
      'input-required-result-basic-list-roots',
      'input-required-result-request-state',
      'input-required-result-multiple-input-requests',
      'input-required-result-multi-round',
      'input-required-result-missing-input-response',
      'input-required-result-non-tool-request',
      'input-required-result-result-type',
      'input-required-result-unsupported-methods',
      'input-required-result-tampered-state',
      'input-required-result-capability-check',
      'input-required-result-ignore-extra-params',
      'input-required-result-validate-input',
    ].map((scenario) => [scenario, NO_INPUT]),
  ),
};

const cliOf = (suitePackage: string) =>
  path.join(path.dirname(createRequire(import.meta.url).resolve(`${suitePackage}/package.json`)), 'dist', 'index.js');
const SUITE_2025 = cliOf('@modelcontextprotocol/conformance');
const SUITE_2026 = cliOf('conformance-next');

/** Runs a suite's CLI; it writes nothing unless asked to, but runs in a folder of its own all the same. */
async function conformance(args: string[], cwd: string, cli = SUITE_2025): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], { cwd, timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

let inboxApi: InboxApi;
let mcp: Awaited<ReturnType<typeof startService>>;
let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-mcp-conformance-'));
  inboxApi = await startInboxApi('mcp_conformance');
  mcp = await startService('src/main.ts', {
    cwd: appRoot,
    env: { PORT: undefined, SERVICE_API_URL: inboxApi.url, LOG_LEVEL: 'info' },
    // The suite's CLI sends no Authorization header.
    args: ['--transport', 'http', '--port', '0', '--allow-anonymous'],
  });
});
afterAll(async () => {
  await mcp?.stop();
  await inboxApi?.stop();
  await rm(workDir, { recursive: true, force: true });
});

describe('MCP conformance suite, server scenarios', () => {
  it('classifies every server scenario of the suite as run or skipped', async () => {
    const { code, output } = await conformance(['list', '--server'], workDir);
    expect(code).toBe(0);
    const listed = [...output.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]);
    expect(listed.sort()).toEqual([...RUN, ...Object.keys(SKIPPED)].sort());
  });

  it.each(RUN)('passes %s', async (scenario) => {
    const { code, output } = await conformance(['server', '--url', `${mcp.url}/mcp`, '--scenario', scenario], workDir);
    // Every check passed, and there was at least one.
    const allPassed = /^Passed: ([1-9]\d*)\/\1, 0 failed/m.test(output);
    expect({ code, result: allPassed ? 'all checks passed' : output }).toEqual({ code: 0, result: 'all checks passed' });
  });
});

describe('MCP conformance suite 0.2.0 (pre-release), server scenarios of 2026-07-28', () => {
  const VERSION = ['--spec-version', '2026-07-28'];
  it('classifies every server scenario of 2026-07-28 as run or skipped', async () => {
    const { code, output } = await conformance(['list', '--server', ...VERSION], workDir, SUITE_2026);
    expect(code).toBe(0);
    const listed = [...output.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]);
    expect(listed.sort()).toEqual([...RUN_2026, ...Object.keys(SKIPPED_2026)].sort());
    expect(Object.values(SKIPPED_2026).every((reason) => typeof reason === 'string' && reason.length > 0)).toBe(true);
  });

  // Checks the suite cannot run against a real server are listed, with the suite's reasons, in the
  // baseline file; the suite fails a run with any other failure, or with a listed one passing.
  const baseline = path.join(appRoot, 'test', 'conformance-2026-expected-failures.yaml');
  it.each(RUN_2026)('passes %s', async (scenario) => {
    const { code, output } = await conformance(
      ['server', '--url', `${mcp.url}/mcp`, '--scenario', scenario, ...VERSION, '--expected-failures', baseline],
      workDir,
      SUITE_2026,
    );
    const passed = /^Passed: ([1-9]\d*)\/(\d+), (\d+) failed/m.exec(output);
    const result = passed && (passed[3] === '0' || /Baseline check passed/.test(output)) ? 'passed' : output;
    expect({ code, result }).toEqual({ code: 0, result: 'passed' });
  });
});
