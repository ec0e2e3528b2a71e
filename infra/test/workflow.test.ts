import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { nodeMajor, repoRoot, services } from './services.js';

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

interface WorkflowJob {
  needs?: string | string[];
  if?: string;
  services?: { postgres?: { image: string } };
  env?: Record<string, string>;
  steps: Step[];
}

const workflow = parse(readFileSync(path.join(repoRoot, '.github', 'workflows', 'ci.yml'), 'utf8')) as {
  on: { pull_request?: unknown; push?: { branches: string[] } };
  jobs: Record<string, WorkflowJob>;
};
const runs = (job: WorkflowJob) => job.steps.flatMap((step) => (step.run ? [step.run] : []));

describe('the Node.js runtime', () => {
  it('is Node 24 LTS, and these tests run on it (tools/node, scripts/setup.sh)', () => {
    expect(nodeMajor).toBe('24');
    expect(process.versions.node.split('.')[0]).toBe(nodeMajor);
  });

  it('is what every setup-node step of the workflow installs', () => {
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const setups = steps.filter((step) => step.uses?.startsWith('actions/setup-node@'));
    expect(setups.length).toBeGreaterThan(0);
    for (const step of setups) expect(step.with?.['node-version-file']).toBe('.node-version');
  });
});

describe('CI workflow', () => {
  it('runs on pull requests and on pushes to main', () => {
    expect(workflow.on).toHaveProperty('pull_request');
    expect(workflow.on.push?.branches).toEqual(['main']);
  });

  it('first lists the affected packages, from the full history', () => {
    const changes = workflow.jobs.changes;
    expect(changes?.steps[0]).toMatchObject({ uses: expect.stringMatching(/^actions\/checkout@/), with: { 'fetch-depth': 0 } });
    expect(runs(changes!).join('\n')).toContain('turbo ls --affected');
  });

  describe.each([...services.map((service) => service.name), '@repo/infra'])('job for %s', (pkg) => {
    const job = workflow.jobs[pkg.replace('@repo/', '')];

    it('runs only when the package is affected', () => {
      expect(job?.needs).toBe('changes');
      expect(job?.if).toBe(`contains(fromJSON(needs.changes.outputs.packages), '${pkg}')`);
    });

    it("tests on Postgres 16 with the pinned pnpm on the project's Node", () => {
      expect(job?.services?.postgres?.image).toBe('postgres:16');
      expect(job?.env?.TEST_DATABASE_URL).toBe('postgresql://postgres:postgres@localhost:5432/postgres');
      const setupNode = job?.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
      expect(setupNode?.with).toEqual({ 'node-version-file': '.node-version', cache: 'pnpm' });
      // Without a version input, pnpm/action-setup installs the one package.json's packageManager pins.
      const setupPnpm = job?.steps.find((step) => step.uses?.startsWith('pnpm/action-setup@'));
      expect(setupPnpm?.with).toBeUndefined();
    });

    it('type-checks, lints and tests it through turbo, with its workspace dependencies when it is an app', () => {
      const filter = pkg === '@repo/infra' ? `--filter=${pkg}` : `--filter=${pkg}...`;
      const commands = runs(job!).filter((run) => run.includes('turbo run'));
      const tasks = commands.flatMap((command) => {
        // Arguments after ` -- ` go to each task's script (the tests' --coverage), not to turbo.
        const run = command.replace(/ -- .*$/, '');
        expect(run).toMatch(new RegExp(`${filter.replace(/[.]/g, '\\.')}$`));
        return run
          .replace(/.*turbo run /, '')
          .split(' ')
          .filter((word) => !word.startsWith('--'));
      });
      expect(tasks.sort()).toEqual(['lint', 'test', 'typecheck']);
    });
  });
});
