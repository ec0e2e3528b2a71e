import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from './errors.js';

/** Where a request value came from; the first element of every issue's `loc`. */
export type InputLocation = 'body' | 'query' | 'path' | 'header';

/**
 * Validates one part of a request. Route handlers call this for `req.body`, `req.query` and
 * `req.params`, so a bad value becomes a ValidationError whose issues point at the field.
 */
export function parseInput<S extends z.ZodType>(schema: S, location: InputLocation, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (!result.success) throw fromZodError(result.error, location);
  return result.data;
}

export function fromZodError(error: z.ZodError, location: InputLocation): ValidationError {
  return new ValidationError(error.issues.flatMap((issue) => toValidationIssues(issue, location)));
}

function toValidationIssues(issue: z.core.$ZodIssue, location: InputLocation): ValidationIssue[] {
  const loc = [location, ...issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part))];
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }));
  }
  if (isMissing(issue)) return [{ loc, msg: 'Field required', type: 'missing' }];
  return [{ loc, msg: issue.message, type: issueType(issue) }];
}

function isMissing(issue: z.core.$ZodIssue): boolean {
  // `input` is present when parsed with reportInput (an absent enum field is an invalid_value);
  // otherwise fall back to zod's wording.
  if ('input' in issue) return issue.input === undefined && issue.code !== 'custom';
  return issue.code === 'invalid_type' && /received undefined/.test(issue.message);
}

/** pydantic v2 error types, so collab clients written against FastAPI keep working. */
function issueType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_NAMES[issue.expected] ?? `${issue.expected}_type`;
    case 'too_small':
      if (issue.origin === 'string') return 'string_too_short';
      if (issue.origin === 'array' || issue.origin === 'set') return 'too_short';
      return issue.inclusive ? 'greater_than_equal' : 'greater_than';
    case 'too_big':
      if (issue.origin === 'string') return 'string_too_long';
      if (issue.origin === 'array' || issue.origin === 'set') return 'too_long';
      return issue.inclusive ? 'less_than_equal' : 'less_than';
    case 'invalid_format':
      return FORMAT_TYPES[issue.format] ?? 'string_pattern_mismatch';
    case 'invalid_value':
      return issue.values.length > 1 ? 'enum' : 'literal_error';
    case 'not_multiple_of':
      return 'multiple_of';
    case 'custom':
      // A refinement may name its pydantic type: `ctx.addIssue({ code: 'custom', params: { type } })`.
      return typeof issue.params?.type === 'string' ? issue.params.type : 'value_error';
    default:
      return 'value_error';
  }
}

const TYPE_NAMES: Record<string, string> = {
  string: 'string_type',
  number: 'float_type',
  int: 'int_type',
  bigint: 'int_type',
  boolean: 'bool_type',
  object: 'dict_type',
  record: 'dict_type',
  array: 'list_type',
  date: 'datetime_type',
};

const FORMAT_TYPES: Record<string, string> = {
  uuid: 'uuid_parsing',
  guid: 'uuid_parsing',
  url: 'url_parsing',
  datetime: 'datetime_from_date_parsing',
  date: 'date_from_datetime_parsing',
  email: 'value_error',
  regex: 'string_pattern_mismatch',
};
