import { readFileSync } from 'node:fs';

/** What the checks read from a Dockerfile: the final (runtime) stage, and every pnpm --filter. */
export interface Dockerfile {
  runtime: { from: string; user?: string; expose: number[]; cmd?: string[]; env: Record<string, string> };
  /** Packages named by `--filter` anywhere in the file. */
  filters: string[];
}

export function readDockerfile(file: string): Dockerfile {
  const instructions = readFileSync(file, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), argument: rest.join(' ') };
    });
  const lastFrom = instructions.findLastIndex((instruction) => instruction.keyword === 'FROM');
  const runtime: Dockerfile['runtime'] = { from: instructions[lastFrom]?.argument ?? '', expose: [], env: {} };
  for (const { keyword, argument } of instructions.slice(lastFrom + 1)) {
    if (keyword === 'USER') runtime.user = argument;
    if (keyword === 'EXPOSE') runtime.expose.push(...argument.split(/\s+/).map(Number));
    if (keyword === 'CMD') runtime.cmd = JSON.parse(argument) as string[];
    if (keyword === 'ENV') {
      for (const pair of argument.split(/\s+/)) {
        const [name = '', value = ''] = pair.split('=');
        runtime.env[name] = value;
      }
    }
  }
  const filters = instructions.flatMap(({ argument }) => [...argument.matchAll(/--filter[= ](\S+)/g)].map((match) => match[1]!));
  return { runtime, filters };
}
