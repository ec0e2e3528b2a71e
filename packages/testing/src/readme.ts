import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The repository's README.md. */
export const readmePath = path.resolve(import.meta.dirname, '..', '..', '..', 'README.md');

/**
 * Where a section's text lies in the README: from just after its start marker (`from`) to its
 * end marker (`to`). Throws when either marker is missing or they are out of order.
 */
function sectionBounds(readme: string, name: string): { from: number; to: number } {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from === -1 || to < from) throw new Error(`README.md has no section ${start} ... ${end}`);
  return { from: from + start.length, to };
}

/** The generated text between a section's markers in the README. */
export async function readmeSection(name: string): Promise<string> {
  const readme = await readFile(readmePath, 'utf8');
  const { from, to } = sectionBounds(readme, name);
  return readme.slice(from, to).trim();
}

/** The README with a section's text replaced; the markers must exist. */
export function replaceSection(readme: string, name: string, content: string): string {
  const { from, to } = sectionBounds(readme, name);
  return `${readme.slice(0, from)}\n${content}\n${readme.slice(to)}`;
}
