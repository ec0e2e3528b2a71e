import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { type ConfigMap, containersOf, imageRepository, type Manifest } from './kubernetes.js';

/**
 * What `kustomize build <dir>` prints, for the kustomization features these manifests use (no
 * kustomize binary is available where the tests run). A feature it does not implement is refused
 * rather than skipped, so that no manifest change slips past the checks unread. Generated
 * ConfigMaps keep their plain name: the hash suffix kustomize appends changes nothing checked here.
 */
export function kustomizeBuild(dir: string): Manifest[] {
  const kustomization = readKustomization(dir);
  let manifests = (kustomization.resources ?? []).flatMap((resource) => {
    const target = path.resolve(dir, resource);
    return statSync(target).isDirectory() ? kustomizeBuild(target) : readManifests(target);
  });
  for (const generator of kustomization.configMapGenerator ?? []) manifests = generateConfigMap(manifests, generator, dir);
  for (const patch of kustomization.patches ?? []) applyPatch(manifests, patch);
  if (kustomization.namespace) for (const manifest of manifests) manifest.metadata.namespace = kustomization.namespace;
  for (const rewrite of kustomization.images ?? []) rewriteImages(manifests, rewrite);
  return manifests;
}

interface Kustomization {
  resources?: string[];
  namespace?: string;
  images?: ImageRewrite[];
  configMapGenerator?: ConfigMapGenerator[];
  patches?: Patch[];
}

interface ImageRewrite {
  name: string;
  newName?: string;
  newTag?: string;
}

interface ConfigMapGenerator {
  name: string;
  behavior?: 'create' | 'merge';
  envs?: string[];
  literals?: string[];
}

/** A JSON 6902 patch; only `replace` is implemented. */
interface Patch {
  target: { kind: string; name: string };
  patch: string;
}

function readKustomization(dir: string): Kustomization {
  const kustomization = parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
  refuseUnknown(`${dir}/kustomization.yaml`, kustomization, [
    'apiVersion',
    'kind',
    'resources',
    'namespace',
    'images',
    'configMapGenerator',
    'patches',
  ]);
  for (const rewrite of kustomization.images ?? [])
    refuseUnknown(`images entry ${rewrite.name}`, rewrite, ['name', 'newName', 'newTag']);
  for (const generator of kustomization.configMapGenerator ?? []) {
    refuseUnknown(`configMapGenerator ${generator.name}`, generator, ['name', 'behavior', 'envs', 'literals']);
  }
  for (const patch of kustomization.patches ?? []) refuseUnknown('patch', patch, ['target', 'patch']);
  return kustomization;
}

function refuseUnknown(where: string, value: object, known: string[]): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw new Error(`${where}: ${unknown.join(', ')} not supported by this loader`);
}

function readManifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((error) => error.message).join('; ')}`);
    return document.toJS() as Manifest;
  });
}

function generateConfigMap(manifests: Manifest[], generator: ConfigMapGenerator, dir: string): Manifest[] {
  const data = Object.fromEntries([
    ...(generator.envs ?? []).flatMap((file) => readEnvFile(path.resolve(dir, file))),
    ...(generator.literals ?? []).map((literal) => keyValue(literal, 'literal')),
  ]);
  const existing = manifests.find((m): m is ConfigMap => m.kind === 'ConfigMap' && m.metadata.name === generator.name);
  switch (generator.behavior ?? 'create') {
    case 'create': {
      if (existing) throw new Error(`ConfigMap ${generator.name} exists already; use behavior: merge`);
      const configMap: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: generator.name }, data };
      return [...manifests, configMap];
    }
    case 'merge':
      if (!existing) throw new Error(`ConfigMap ${generator.name} to merge into does not exist`);
      Object.assign(existing.data, data);
      return manifests;
    default:
      throw new Error(`configMapGenerator behavior ${String(generator.behavior)} not supported by this loader`);
  }
}

/** kustomize's env files: KEY=VALUE lines; blank lines and lines starting with # are skipped. */
function readEnvFile(file: string): [string, string][] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => keyValue(line, file));
}

function keyValue(line: string, where: string): [string, string] {
  const equals = line.indexOf('=');
  // Without `=`, kustomize would copy the variable from the environment it runs in.
  if (equals < 1) throw new Error(`${where}: "${line}" is not KEY=VALUE`);
  return [line.slice(0, equals), line.slice(equals + 1)];
}

function applyPatch(manifests: Manifest[], patch: Patch): void {
  const targets = manifests.filter((m) => m.kind === patch.target.kind && m.metadata.name === patch.target.name);
  if (targets.length === 0) throw new Error(`patch target ${patch.target.kind}/${patch.target.name} matches nothing`);
  const operations = parse(patch.patch) as { op: string; path: string; value: unknown }[];
  for (const operation of operations) {
    if (operation.op !== 'replace') throw new Error(`patch op ${operation.op} not supported by this loader`);
    for (const target of targets) replaceAt(target, operation.path, operation.value);
  }
}

function replaceAt(document: object, pointer: string, value: unknown): void {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = keys.pop();
  let parent: unknown = document;
  for (const key of keys) parent = (parent as Record<string, unknown> | undefined)?.[key];
  // replace, unlike add, fails when the path does not exist: so does kustomize.
  if (last === undefined || typeof parent !== 'object' || parent === null || !(last in parent)) {
    throw new Error(`patch path ${pointer} does not exist`);
  }
  (parent as Record<string, unknown>)[last] = value;
}

function rewriteImages(manifests: Manifest[], rewrite: ImageRewrite): void {
  for (const container of manifests.flatMap(containersOf)) {
    const repository = imageRepository(container.image);
    if (repository !== rewrite.name) continue;
    const tagOrDigest = container.image.slice(repository.length);
    container.image = `${rewrite.newName ?? repository}${rewrite.newTag ? `:${rewrite.newTag}` : tagOrDigest}`;
  }
}
