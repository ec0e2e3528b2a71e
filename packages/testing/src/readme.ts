import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The repository's README.md. */
export const readmePath = path.resolve(import.meta.dirname, '..', '..', '..', 'README.md');

function markers(name: string): [string, string] {
  return [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`];
}

/** The generated text between a section's markers in the README. */
export async function readmeSection(name: string): Promise<string> {
  const readme = await readFile(readmePath, 'utf8');
  const [start, end] = markers(name);
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from === -1 || to < from) throw new Error(`README.md has no section ${start} ... ${end}`);
  return readme.slice(from + start.length, to).trim();
}

/** The README with a section's text replaced; the markers must exist. */
export function replaceSection(readme: string, name: string, content: string): string {
  const [start, end] = markers(name);
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from === -1 || to < from) throw new Error(`README.md has no section ${start} ... ${end}`);
  return `${readme.slice(0, from + start.length)}\n${content}\n${readme.slice(to)}`;
}
