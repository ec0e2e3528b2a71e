import { z } from 'zod';

/**
 * One environment variable: a string parsed into a value, with a description of what is
 * expected that becomes the error message when the value is missing or cannot be parsed.
 */
function setting<T>(expected: string, parse: (raw: string) => T | undefined) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `is required: ${expected}` : `must be ${expected}`) })
    .transform((raw, ctx) => {
      const value = parse(raw.trim());
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: `must be ${expected}`, input: raw });
        return z.NEVER;
      }
      return value;
    })
    .meta({ expects: expected });
}

function parseInteger(raw: string, min: number, max: number): number | undefined {
  if (!/^-?\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return value >= min && value <= max ? value : undefined;
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

export function string() {
  return setting('a non-empty string', (raw) => (raw === '' ? undefined : raw));
}

export function integer(options: { min?: number; max?: number } = {}) {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = options;
  const range =
    options.min !== undefined && options.max !== undefined
      ? ` from ${min} to ${max}`
      : options.min !== undefined
        ? ` of at least ${min}`
        : options.max !== undefined
          ? ` of at most ${max}`
          : '';
  return setting(`an integer${range}`, (raw) => parseInteger(raw, min, max));
}

/** A TCP port; 0 asks the system for any free one. */
export function port() {
  return integer({ min: 0, max: 65535 });
}

export function boolean() {
  return setting('true or false', (raw) => {
    const value = raw.toLowerCase();
    return TRUE.has(value) ? true : FALSE.has(value) ? false : undefined;
  });
}

export function oneOf<const V extends readonly [string, ...string[]]>(values: V) {
  return setting<V[number]>(`one of ${values.join(', ')}`, (raw) => values.find((value) => value === raw));
}

export function url(options: { protocols?: string[] } = {}) {
  const protocols = options.protocols ?? ['http:', 'https:'];
  const names = protocols.map((p) => p.replace(/:$/, '')).join(' or ');
  return setting(`a ${names} URL`, (raw) => {
    try {
      const parsed = new URL(raw);
      return protocols.includes(parsed.protocol) ? raw.replace(/\/+$/, '') : undefined;
    } catch {
      return undefined;
    }
  });
}

export function postgresUrl() {
  return url({ protocols: ['postgres:', 'postgresql:'] });
}

/** A comma-separated list; blanks between commas are dropped. */
export function list() {
  return setting('a comma-separated list', (raw) => {
    const items = raw
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    return items.length > 0 ? items : undefined;
  });
}
