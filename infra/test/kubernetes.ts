/** The parts of Kubernetes objects that the checks read, typed loosely enough to hold any manifest. */

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}

export interface Probe {
  httpGet?: { path: string; port: number | string };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  volumes?: { name: string; emptyDir?: object }[];
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: PodSpec;
}

export interface Deployment extends Manifest {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: PodTemplate };
}

export interface Job extends Manifest {
  spec: { template: PodTemplate };
}

export interface Service extends Manifest {
  spec: { selector: Record<string, string>; ports: { name?: string; port: number; targetPort: number | string }[] };
}

export interface HorizontalPodAutoscaler extends Manifest {
  spec: {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicas: number;
    maxReplicas: number;
    metrics: { type: string; resource?: { name: string; target: { type: string; averageUtilization?: number } } }[];
  };
}

export interface ConfigMap extends Manifest {
  data: Record<string, string>;
}

export interface Secret extends Manifest {
  stringData: Record<string, string>;
}

/** The pod template of a workload, or undefined for objects that run no pods. */
export function podTemplateOf(manifest: Manifest): PodTemplate | undefined {
  switch (manifest.kind) {
    case 'Deployment':
    case 'Job':
      return (manifest as Deployment | Job).spec.template;
    default:
      return undefined;
  }
}

export function containersOf(manifest: Manifest): Container[] {
  const spec = podTemplateOf(manifest)?.spec;
  return spec ? [...(spec.initContainers ?? []), ...spec.containers] : [];
}

/** `registry.example.com:5000/team/inbox-api:dev` → `inbox-api`. */
export function imageName(image: string): string {
  const lastSegment = image.split('@')[0]!.split('/').pop()!;
  return lastSegment.split(':')[0]!;
}

/** The image reference without its tag or digest: what a kustomize `images` entry matches on. */
export function imageRepository(image: string): string {
  const withoutDigest = image.split('@')[0]!;
  const tagAt = withoutDigest.lastIndexOf(':');
  return tagAt > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, tagAt) : withoutDigest;
}
