/**
 * `pnpm build`'s last step: writes the console's folder (src/console/static) to where the built
 * server reads it (dist/console/static, beside dist/console/routes.js), each script compiled as the
 * server compiles it from sources, the other servable files copied, anything else (tsconfig.json)
 * left out. The folder is written anew, so no file of an earlier build stays.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compileScript, servedName } from '../src/console/files.js';
import { appRoot } from '../src/paths.js';

const source = path.join(appRoot, 'src', 'console', 'static');
const target = path.join(appRoot, 'dist', 'console', 'static');

await rm(target, { recursive: true, force: true });
const entries = await readdir(source, { recursive: true, withFileTypes: true });
for (const entry of entries.filter((each) => each.isFile())) {
  const name = path.relative(source, path.join(entry.parentPath, entry.name));
  const served = servedName(name);
  if (served === undefined) continue;
  const content = await readFile(path.join(source, name));
  await mkdir(path.dirname(path.join(target, served)), { recursive: true });
  await writeFile(path.join(target, served), name === served ? content : compileScript(content.toString('utf8')));
}
console.log(`console: ${path.relative(appRoot, source)} -> ${path.relative(appRoot, target)}`);
