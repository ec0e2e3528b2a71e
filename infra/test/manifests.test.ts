import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { parse } from 'yaml';
import { z } from 'zod';
import { loadConfig } from '@repo/config';
import { parseCommandLine } from '../../apps/inbox-mcp/src/config.js';
import { MAX_TIMEOUT_SECONDS as WAIT_FOR_REPLY_MAX_SECONDS } from '../../apps/inbox-mcp/src/tools/wait-for-reply.js';
import { readDockerfile } from './dockerfile.js';
import {
  type ConfigMap,
  type Container,
  type Deployment,
  type HorizontalPodAutoscaler,
  type Job,
  type Manifest,
  type PodTemplate,
  type Probe,
  type Secret,
  type Service,
  containersOf,
  imageName,
  podTemplateOf,
} from './kubernetes.js';
import { kustomizeBuild } from './kustomize.js';
import { nodeMajor, repoRoot, services, type ServiceUnderTest } from './services.js';

// Credentials: they may come from a Secret only, never from a ConfigMap or a literal value.
const SECRET_NAME = /SECRET|TOKEN|PASSWORD|KEY|CREDENTIAL/;
// Connection strings that can carry a password are secrets too.
const CREDENTIAL_URLS = new Set(['DATABASE_URL', 'REDIS_URL', 'SMTP_URL']);
// A public key (SendGrid's event-webhook signature key) is published by its owner: config, not a secret.
const PUBLIC_KEY = /_PUBLIC_KEY$/;
const isSecretSetting = (name: string) => (SECRET_NAME.test(name) && !PUBLIC_KEY.test(name)) || CREDENTIAL_URLS.has(name);

const k8sDir = (service: string, ...parts: string[]) => path.join(repoRoot, 'infra', 'k8s', service, ...parts);
const dockerfilePath = (image: string) => path.join(repoRoot, 'infra', 'docker', `${image}.Dockerfile`);
/** `dist/server.js` → the app's `src/server.ts`, which the build compiles to it. */
const sourceOf = (service: string, entry = '') =>
  path.join(repoRoot, 'apps', service, entry.replace(/^dist\/(.*)\.js$/, 'src/$1.ts'));

function only<T extends Manifest>(manifests: Manifest[], kind: string): T {
  const found = manifests.filter((manifest) => manifest.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as T;
}

function deploymentNamed(manifests: Manifest[], name: string): Deployment {
  const found = manifests.filter((m): m is Deployment => m.kind === 'Deployment' && m.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one Deployment ${name}, found ${found.length}`);
  return found[0]!;
}

/** The container named after its Deployment: the one that runs the app. */
function appContainer(template: PodTemplate, name: string): Container {
  const container = template.spec.containers.find((c) => c.name === name);
  if (!container) throw new Error(`no container named ${name}`);
  return container;
}

function readSecretExample(service: string): Secret {
  return parse(readFileSync(k8sDir(service, 'base', 'secret.example.yaml'), 'utf8')) as Secret;
}

/** Where each setting of a container comes from, as the container's process will see it. */
interface Setting {
  source: 'configMap' | 'secret' | 'value' | 'args';
  value: string | undefined;
  secret?: { name: string; key: string };
}

function settingsOf(container: Container, manifests: Manifest[], service: ServiceUnderTest): [string, Setting][] {
  const configMaps = manifests.filter((m): m is ConfigMap => m.kind === 'ConfigMap');
  const fromConfigMaps = (container.envFrom ?? []).flatMap(({ configMapRef, secretRef }) => {
    if (secretRef) throw new Error(`${container.name}: envFrom a whole Secret; reference each key with secretKeyRef`);
    const configMap = configMaps.find((c) => c.metadata.name === configMapRef?.name);
    if (!configMap) throw new Error(`${container.name}: ConfigMap ${configMapRef?.name} is not among the manifests`);
    return Object.entries(configMap.data).map(([name, value]): [string, Setting] => [name, { source: 'configMap', value }]);
  });
  const fromEnv = (container.env ?? []).map(({ name, value, valueFrom }): [string, Setting] => {
    if (valueFrom?.secretKeyRef) return [name, { source: 'secret', value: undefined, secret: valueFrom.secretKeyRef }];
    if (valueFrom) throw new Error(`${container.name}: ${name} comes from neither a Secret nor a literal value`);
    return [name, { source: 'value', value }];
  });
  const fromArgs = Object.entries(service.settingsFromArgs?.(container.args ?? []) ?? {}).map(
    ([name, value]): [string, Setting] => [name, { source: 'args', value }],
  );
  return [...fromConfigMaps, ...fromEnv, ...fromArgs];
}

/** The environment a container's process gets, with the example Secret's placeholders for secrets. */
function environmentOf(settings: [string, Setting][], secretExample: Secret): Record<string, string | undefined> {
  return Object.fromEntries(
    settings.map(([name, setting]) => [name, setting.secret ? secretExample.stringData[setting.secret.key] : setting.value]),
  );
}

function probePort(probe: Probe | undefined, container: Container): number | undefined {
  const port = probe?.httpGet?.port;
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

/** Kubernetes quantities (`250m`, `1`, `512Mi`) as numbers, to compare requests with limits. */
function quantity(value: string): number {
  const units: Record<string, number> = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
  const match = /^([\d.]+)(m|Ki|Mi|Gi)?$/.exec(value);
  if (!match) throw new Error(`quantity ${value} not understood`);
  return Number(match[1]) * (match[2] ? units[match[2]]! : 1);
}

/** The parsed settings the checks read (httpSettings and storageSettings in packages/config). */
type Settings = { PORT: number; HOST: string; SHUTDOWN_TIMEOUT_MS: number; DATA_DIR?: string };

/** A Deployment that runs the service's app, with its container and the settings that container gets. */
function workloadOf(manifests: Manifest[], name: string, service: ServiceUnderTest, secretExample: Secret) {
  const deployment = deploymentNamed(manifests, name);
  const template = deployment.spec.template;
  const container = appContainer(template, name);
  const settings = settingsOf(container, manifests, service);
  const config = loadConfig(service.configSchema, environmentOf(settings, secretExample)) as Settings;
  return { deployment, template, container, settings, config };
}

// The rules every Deployment of an app is held to, the API's and the worker's alike.

function expectEachSettingOnce(settings: [string, Setting][], schemaKeys: string[]): void {
  const names = settings.map(([name]) => name);
  expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  expect([...names].sort()).toEqual(schemaKeys);
  // The name on both sides makes a failure say which setting is wrong.
  for (const [name, setting] of settings) {
    expect({ name, fromSecret: setting.source === 'secret' }).toEqual({ name, fromSecret: isSecretSetting(name) });
  }
}

function expectWritableDirs(template: PodTemplate, container: Container, config: Settings, service: ServiceUnderTest): void {
  const emptyDirs = new Set(template.spec.volumes?.filter((v) => v.emptyDir).map((v) => v.name));
  const writable = (container.volumeMounts ?? []).filter((m) => emptyDirs.has(m.name)).map((m) => m.mountPath);
  expect(writable).toContain('/tmp');
  if ('DATA_DIR' in service.configSchema.shape) expect(writable).toContain(config.DATA_DIR);
}

function expectProbesOnPort(container: Container, port: number): void {
  for (const probe of [container.livenessProbe, container.readinessProbe]) {
    expect(probe?.httpGet?.path).toMatch(/^\//);
    expect(probePort(probe, container)).toBe(port);
  }
}

/** Seconds of the container's preStop pause (`sleep <seconds>`); 0 without a preStop hook. */
function preStopPause(container: Container): number {
  const command = container.lifecycle?.preStop?.exec?.command;
  if (!command) return 0;
  const [sleep, seconds] = command;
  expect(sleep).toBe('sleep');
  expect(Number(seconds)).toBeGreaterThan(0);
  return Number(seconds);
}

describe.each(services)('$name', (service) => {
  const { PORT: defaultPort } = loadConfig(z.object({ PORT: service.configSchema.shape.PORT }), {});
  // Settings named TEST_* exist for the test suites only (crash points, trusted test hosts); no
  // deployment sets them.
  const schemaKeys = Object.keys(service.configSchema.shape)
    .filter((name) => !name.startsWith('TEST_'))
    .sort();
  const secretExample = readSecretExample(service.name);
  const { worker } = service;
  const deploymentNames = [service.name, ...(worker ? [worker.name] : [])];

  describe.each(['base', 'overlays/dev'])('kustomization %s', (variant) => {
    const manifests = kustomizeBuild(k8sDir(service.name, variant));
    const { deployment, template, container, settings, config } = workloadOf(manifests, service.name, service, secretExample);

    it('names the Deployment after the service, and runs the image built by its Dockerfile', () => {
      const names = manifests.filter((m) => m.kind === 'Deployment').map((m) => m.metadata.name);
      expect(names.sort()).toEqual([...deploymentNames].sort());
      expect(deployment.metadata.name).toBe(service.name);
      expect(imageName(container.image)).toBe(service.name);
      expect(existsSync(dockerfilePath(imageName(container.image)))).toBe(true);
    });

    it("listens on the app's default port, which the Service targets under the same number", () => {
      const ports = container.ports ?? [];
      expect(ports.map((p) => p.containerPort)).toEqual([defaultPort]);
      expect(config.PORT).toBe(defaultPort);
      const svc = only<Service>(manifests, 'Service');
      expect(svc.metadata.name).toBe(service.name);
      expect(svc.spec.ports).toHaveLength(1);
      const [servicePort] = svc.spec.ports;
      expect(servicePort!.port).toBe(defaultPort);
      const target = servicePort!.targetPort;
      expect(typeof target === 'number' ? target : ports.find((p) => p.name === target)?.containerPort).toBe(defaultPort);
      expect(template.metadata?.labels).toMatchObject(svc.spec.selector);
      expect(template.metadata?.labels).toMatchObject(deployment.spec.selector.matchLabels);
    });

    it('sets exactly the settings the app reads, each once, secrets from Secrets only', () => {
      expectEachSettingOnce(settings, schemaKeys);
    });

    it('gives settings that the app accepts, as the deployment needs them', () => {
      expect(config).toMatchObject(service.deployedSettings);
      expectWritableDirs(template, container, config, service);
    });

    it('runs the entry point its Dockerfile names', () => {
      const command = [...(container.command ?? []), ...(container.args ?? [])];
      expect(command).toEqual(readDockerfile(dockerfilePath(service.name)).runtime.cmd);
      // The entry: the first argument that is a file (node's own options come before it).
      expect(
        existsSync(
          sourceOf(
            service.name,
            command.find((part) => part.endsWith('.js')),
          ),
        ),
      ).toBe(true);
      if (!service.settingsFromArgs) expect(container.args ?? []).toEqual([]);
    });

    it('has liveness and readiness probes on its HTTP port', () => {
      expectProbesOnPort(container, defaultPort);
    });

    it('drains before it stops: a preStop pause, then SHUTDOWN_TIMEOUT_MS, both within the grace period', () => {
      // Behind the Service: the pause lets the endpoint removal reach every load balancer first.
      const pause = preStopPause(container);
      expect(pause).toBeGreaterThan(0);
      expect(template.spec.terminationGracePeriodSeconds).toBeGreaterThan(pause + config.SHUTDOWN_TIMEOUT_MS / 1000);
    });

    it('is scaled on CPU by a HorizontalPodAutoscaler that alone sets the replica count', () => {
      const hpa = only<HorizontalPodAutoscaler>(manifests, 'HorizontalPodAutoscaler');
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: service.name });
      expect(hpa.spec.metrics).toContainEqual(
        expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }),
      );
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
      expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
      expect(deployment.spec.replicas).toBeUndefined();
    });

    it('runs every pod as non-root on a read-only root filesystem, with resource requests within limits', () => {
      for (const manifest of manifests) {
        const pod = podTemplateOf(manifest);
        if (!pod) continue;
        expect({ pod: manifest.metadata.name, runAsNonRoot: pod.spec.securityContext?.runAsNonRoot }).toEqual({
          pod: manifest.metadata.name,
          runAsNonRoot: true,
        });
        const emptyDirs = new Set(pod.spec.volumes?.filter((v) => v.emptyDir).map((v) => v.name));
        for (const c of containersOf(manifest)) {
          expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
          expect(c.securityContext?.capabilities?.drop).toEqual(['ALL']);
          for (const mount of c.volumeMounts ?? []) expect(emptyDirs).toContain(mount.name);
          for (const resource of ['cpu', 'memory']) {
            const requested = c.resources?.requests?.[resource];
            const limit = c.resources?.limits?.[resource];
            expect({ container: c.name, resource, requested: typeof requested, limit: typeof limit }).toEqual({
              container: c.name,
              resource,
              requested: 'string',
              limit: 'string',
            });
            expect(quantity(requested!)).toBeLessThanOrEqual(quantity(limit!));
          }
        }
      }
    });

    const jobs = manifests.filter((m): m is Job => m.kind === 'Job');
    if (service.migrates) {
      it('migrates with a Job that runs dist/migrate.js from the same image', () => {
        expect(jobs).toHaveLength(1);
        const migrate = jobs[0]!.spec.template.spec;
        expect(migrate.restartPolicy).toBe('Never');
        expect(migrate.containers).toHaveLength(1);
        const job = migrate.containers[0]!;
        expect(job.image).toBe(container.image);
        expect([...(job.command ?? []), ...(job.args ?? [])]).toEqual(['node', 'dist/migrate.js']);
        expect(existsSync(sourceOf(service.name, 'dist/migrate.js'))).toBe(true);
        const jobSettings = settingsOf(job, manifests, service);
        expect(jobSettings.map(([name]) => name)).toContain('DATABASE_URL');
        for (const [name, setting] of jobSettings) {
          expect(schemaKeys).toContain(name);
          expect({ name, fromSecret: setting.source === 'secret' }).toEqual({ name, fromSecret: isSecretSetting(name) });
        }
        expect(job.volumeMounts?.map((m) => m.mountPath)).toContain('/tmp');
      });
    } else {
      it('has no migration Job', () => {
        expect(jobs).toEqual([]);
      });
    }

    it('references Secrets by name only: the Secret itself is not a resource', () => {
      expect(manifests.filter((m) => m.kind === 'Secret')).toEqual([]);
    });

    if (worker) {
      describe(`worker Deployment ${worker.name}`, () => {
        const workload = workloadOf(manifests, worker.name, service, secretExample);
        const ownSettings = ([name]: [string, Setting]) => !(name in worker.deployedSettings);

        it("runs the API's image and entry point", () => {
          expect(workload.container.image).toBe(container.image);
          expect([...(workload.container.command ?? []), ...(workload.container.args ?? [])]).toEqual([
            ...(container.command ?? []),
            ...(container.args ?? []),
          ]);
        });

        it("gets the API's settings from the same ConfigMaps and Secret keys, but for its own", () => {
          expect(workload.container.envFrom).toEqual(container.envFrom);
          expect(Object.fromEntries(workload.settings.filter(ownSettings))).toEqual(
            Object.fromEntries(settings.filter(ownSettings)),
          );
          expect(workload.config).toMatchObject({ ...service.deployedSettings, ...worker.deployedSettings });
          expectWritableDirs(workload.template, workload.container, workload.config, service);
        });

        it('sets exactly the settings the app reads, each once, secrets from Secrets only', () => {
          expectEachSettingOnce(workload.settings, schemaKeys);
        });

        it('has liveness and readiness probes on its HTTP port, and gets no requests: neither selector matches its pods', () => {
          expect((workload.container.ports ?? []).map((p) => p.containerPort)).toEqual([defaultPort]);
          expect(workload.config.PORT).toBe(defaultPort);
          expectProbesOnPort(workload.container, defaultPort);
          const labels = workload.template.metadata?.labels;
          expect(labels).toMatchObject(workload.deployment.spec.selector.matchLabels);
          expect(labels).not.toMatchObject(only<Service>(manifests, 'Service').spec.selector);
          expect(labels).not.toMatchObject(deployment.spec.selector.matchLabels);
          expect(template.metadata?.labels).not.toMatchObject(workload.deployment.spec.selector.matchLabels);
        });

        it("stops within its grace period: the probe server's close, then the jobs' stop, SHUTDOWN_TIMEOUT_MS each at most", () => {
          // No Service routes to it, so a preStop pause is not needed; one would count too.
          const needed = preStopPause(workload.container) + (2 * workload.config.SHUTDOWN_TIMEOUT_MS) / 1000;
          expect(workload.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(needed);
        });

        it('has a fixed replica count, which no HorizontalPodAutoscaler changes', () => {
          expect(workload.deployment.spec.replicas).toBeGreaterThanOrEqual(1);
          const autoscalers = manifests.filter((m): m is HorizontalPodAutoscaler => m.kind === 'HorizontalPodAutoscaler');
          expect(autoscalers.filter((hpa) => hpa.spec.scaleTargetRef.name === worker.name)).toEqual([]);
        });
      });
    }
  });

  describe('dev overlay', () => {
    const overlay = kustomizeBuild(k8sDir(service.name, 'overlays', 'dev'));
    const { namespace } = parse(readFileSync(k8sDir(service.name, 'overlays', 'dev', 'kustomization.yaml'), 'utf8')) as {
      namespace?: string;
    };

    it('puts every object in its namespace', () => {
      expect(namespace).toMatch(/^[a-z0-9-]+$/);
      for (const manifest of overlay)
        expect(`${manifest.kind}/${manifest.metadata.name} in ${manifest.metadata.namespace}`).toBe(
          `${manifest.kind}/${manifest.metadata.name} in ${namespace}`,
        );
    });

    it("pins a tag of the service's image wherever the base runs it", () => {
      const images = overlay
        .flatMap(containersOf)
        .map((c) => c.image)
        .filter((image) => imageName(image) === service.name);
      expect(images.length).toBeGreaterThan(0);
      for (const image of images) expect(image).toMatch(new RegExp(`(^|/)${service.name}:[\\w.-]+$`));
    });
  });

  describe('image', () => {
    const dockerfile = readDockerfile(dockerfilePath(service.name));

    it('builds this package and no other', () => {
      expect(new Set(dockerfile.filters)).toEqual(new Set([service.name]));
    });

    it("runs on the project's Node as the non-root user the pods run as, listening on all interfaces in production mode", () => {
      expect(dockerfile.runtime.from).toBe(`node:${nodeMajor}-slim`);
      const manifests = kustomizeBuild(k8sDir(service.name, 'base'));
      const uid = Number(dockerfile.runtime.user?.split(':')[0]);
      expect(uid).toBeGreaterThan(0);
      for (const name of deploymentNames) {
        const { runAsUser } = deploymentNamed(manifests, name).spec.template.spec.securityContext ?? {};
        expect({ deployment: name, runAsUser }).toEqual({ deployment: name, runAsUser: uid });
      }
      expect(dockerfile.runtime.env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' });
      expect(dockerfile.runtime.expose).toEqual([defaultPort]);
    });
  });

  describe('secret example', () => {
    it('lists exactly the Secret keys the manifests reference, under the name they reference', () => {
      const references = kustomizeBuild(k8sDir(service.name, 'base'))
        .flatMap(containersOf)
        .flatMap((c) => c.env ?? [])
        .flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef] : []));
      expect(secretExample.kind).toBe('Secret');
      expect(new Set(references.map((r) => r.name))).toEqual(new Set([secretExample.metadata.name]));
      expect(Object.keys(secretExample.stringData).sort()).toEqual([...new Set(references.map((r) => r.key))].sort());
    });
  });

  describe('probe paths', () => {
    let running: Awaited<ReturnType<ServiceUnderTest['start']>>;
    beforeAll(async () => {
      running = await service.start();
    });
    afterAll(() => running.close());

    it.each(deploymentNames)('answer 200 from the app that %s runs', async (name) => {
      const container = appContainer(deploymentNamed(kustomizeBuild(k8sDir(service.name, 'base')), name).spec.template, name);
      const app = name === service.name ? running.app : running.workerApp;
      if (!app) throw new Error(`start() builds no app for ${name}`);
      const paths = [container.livenessProbe, container.readinessProbe].map((probe) => probe?.httpGet?.path ?? '');
      for (const probePath of new Set(paths)) {
        expect({ probePath, status: (await request(app).get(probePath)).status }).toEqual({ probePath, status: 200 });
      }
    });
  });
});

describe('collab-api image', () => {
  const app = path.join(repoRoot, 'apps', 'collab-api');

  // pnpm deploy (the Dockerfile's) copies the files `pnpm pack` lists: those of package.json's "files".
  it("holds the console's files where the built server reads them (dist/console/static), and no sources", () => {
    // The console's step of the build alone; the whole build and its server are the console test's.
    execFileSync('pnpm', ['run', 'build:console'], { cwd: app, stdio: 'ignore' });
    const built = readdirSync(path.join(app, 'dist', 'console', 'static'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(app, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
    expect(built).toEqual(
      expect.arrayContaining(
        [
          'index.html',
          'session.js',
          'approvals/request.html',
          'load-jobs/load-jobs.js',
          'queries/queries.js',
          'shared-data/shared-data.js',
        ].map((file) => `dist/console/static/${file}`),
      ),
    );
    const { files } = JSON.parse(execFileSync('pnpm', ['pack', '--dry-run', '--json'], { cwd: app, encoding: 'utf8' })) as {
      files: { path: string }[];
    };
    const packed = files.map((file) => file.path);
    expect(packed).toEqual(expect.arrayContaining(built));
    expect(packed.filter((file) => file.startsWith('src/'))).toEqual([]);
  });
});

describe('collab-api approval expiry', () => {
  it("has one schedule, the worker's own (src/approvals/expiry.ts): no CronJob runs it beside the worker", () => {
    for (const variant of ['base', 'overlays/dev']) {
      const cronJobs = kustomizeBuild(k8sDir('collab-api', variant)).filter((manifest) => manifest.kind === 'CronJob');
      expect({ variant, cronJobs }).toEqual({ variant, cronJobs: [] });
    }
  });
});

describe('inbox-mcp in its dev namespace', () => {
  it("reaches inbox-api through inbox-api's Service in the same namespace", () => {
    const mcp = kustomizeBuild(k8sDir('inbox-mcp', 'overlays', 'dev'));
    const api = kustomizeBuild(k8sDir('inbox-api', 'overlays', 'dev'));
    const url = new URL(only<ConfigMap>(mcp, 'ConfigMap').data.SERVICE_API_URL ?? '');
    const apiService = only<Service>(api, 'Service');
    expect(url.hostname).toBe(apiService.metadata.name);
    expect(Number(url.port)).toBe(apiService.spec.ports[0]?.port);
    expect(only<Deployment>(mcp, 'Deployment').metadata.namespace).toBe(apiService.metadata.namespace);
  });
});

describe('inbox-mcp on 0.0.0.0', () => {
  it.each([['base'], ['overlays', 'dev']])(
    'kustomization %s: answers no caller without a key (no --allow-anonymous), nor does the image by itself',
    (...variant) => {
      const deployment = only<Deployment>(kustomizeBuild(k8sDir('inbox-mcp', ...variant)), 'Deployment');
      const container = appContainer(deployment.spec.template, 'inbox-mcp');
      expect(parseCommandLine(container.args ?? [], {}).allowAnonymous).toBe(false);
      const command = readDockerfile(dockerfilePath('inbox-mcp')).runtime.cmd ?? [];
      // The server's arguments follow its entry point (node's own options come before it).
      const imageArgs = command.slice(command.findIndex((part) => part.endsWith('.js')) + 1);
      expect(parseCommandLine(imageArgs, {}).allowAnonymous).toBe(false);
    },
  );
});

describe('load balancer timeouts of the services that hold requests open', () => {
  // The longest a request stays open on purpose: GET /v1/events?wait= (60 s) and its stream; wait_for_reply.
  const longest = { 'inbox-api': 60, 'inbox-mcp': WAIT_FOR_REPLY_MAX_SECONDS };
  it.each(Object.entries(longest))('%s names a BackendConfig whose timeout outlasts its longest wait', (name, seconds) => {
    for (const variant of ['base', path.join('overlays', 'dev')]) {
      const manifests = kustomizeBuild(k8sDir(name, variant));
      const service = only<Service & { metadata: { annotations?: Record<string, string> } }>(manifests, 'Service');
      const named = JSON.parse(service.metadata.annotations?.['cloud.google.com/backend-config'] ?? '{}') as { default?: string };
      const config = only<Manifest & { spec: { timeoutSec: number } }>(manifests, 'BackendConfig');
      expect(named.default).toBe(config.metadata.name);
      // GKE's default, 30 s, would cut them.
      expect(config.spec.timeoutSec).toBeGreaterThan(seconds);
    }
  });

  it.each(Object.entries(longest))(
    "%s has an Ingress to its Service's port whose NGINX proxy timeouts outlast its longest wait, unbuffered",
    (name, seconds) => {
      for (const variant of ['base', path.join('overlays', 'dev')]) {
        const manifests = kustomizeBuild(k8sDir(name, variant));
        const service = only<Service>(manifests, 'Service');
        const ingress = only<
          Manifest & {
            metadata: { annotations?: Record<string, string> };
            spec: { defaultBackend: { service: { name: string; port: { number: number } } } };
          }
        >(manifests, 'Ingress');
        expect(ingress.spec.defaultBackend.service).toEqual({
          name: service.metadata.name,
          port: { number: service.spec.ports[0]!.port },
        });
        const annotations = ingress.metadata.annotations ?? {};
        // NGINX's default, 60 s, is no longer than the longest wait; buffering would hold back a stream's events.
        expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThan(seconds);
        expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-send-timeout'])).toBeGreaterThan(seconds);
        expect(annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
      }
    },
  );
});
