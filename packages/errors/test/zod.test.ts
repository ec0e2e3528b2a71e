import { z } from 'zod';
import { parseInput, ValidationError } from '../src/index.js';

function issuesOf(schema: z.ZodType, location: 'body' | 'query' | 'path', value: unknown) {
  try {
    parseInput(schema, location, value);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues;
  }
  throw new Error('expected a ValidationError');
}

describe('parseInput', () => {
  const body = z.object({ name: z.string().min(1).max(5), count: z.number().int().min(0), tags: z.array(z.string()) }).strict();

  it('returns the parsed value when it is valid', () => {
    expect(parseInput(body, 'body', { name: 'a', count: 1, tags: [] })).toEqual({ name: 'a', count: 1, tags: [] });
  });

  it('reports a missing field as FastAPI does: loc [location, field], type "missing"', () => {
    expect(issuesOf(body, 'body', { count: 1, tags: [] })).toEqual([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('names pydantic types for wrong types', () => {
    const issues = issuesOf(body, 'body', { name: 5, count: 'x', tags: {} });
    expect(issues.map((i) => [i.loc, i.type])).toEqual([
      [['body', 'name'], 'string_type'],
      [['body', 'count'], 'float_type'],
      [['body', 'tags'], 'list_type'],
    ]);
  });

  it('points into arrays with numeric indexes', () => {
    expect(issuesOf(body, 'body', { name: 'a', count: 1, tags: ['ok', 3] })[0]?.loc).toEqual(['body', 'tags', 1]);
  });

  it('reports bounds', () => {
    const types = issuesOf(body, 'body', { name: '', count: -1, tags: [] }).map((i) => i.type);
    expect(types).toEqual(['string_too_short', 'greater_than_equal']);
    expect(issuesOf(body, 'body', { name: 'toolong', count: 0, tags: [] })[0]?.type).toBe('string_too_long');
  });

  it('reports each unknown key of a strict object on its own', () => {
    expect(issuesOf(body, 'body', { name: 'a', count: 1, tags: [], x: 1, y: 2 })).toEqual([
      { loc: ['body', 'x'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      { loc: ['body', 'y'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
  });

  it('uses the location it is given: a malformed uuid path parameter', () => {
    expect(issuesOf(z.object({ dataset_id: z.uuid() }), 'path', { dataset_id: 'nope' })).toEqual([
      { loc: ['path', 'dataset_id'], msg: expect.any(String), type: 'uuid_parsing' },
    ]);
  });

  it('reports enum mismatches, and a missing enum field as missing', () => {
    expect(issuesOf(z.object({ role: z.enum(['a', 'b']) }), 'body', { role: 'c' })[0]?.type).toBe('enum');
    expect(issuesOf(z.object({ role: z.enum(['a', 'b']) }), 'body', {})).toEqual([
      { loc: ['body', 'role'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('summarises the first issue in the message', () => {
    try {
      parseInput(body, 'body', {});
    } catch (error) {
      expect((error as Error).message).toBe('Invalid request: body.name: Field required (and 2 more)');
    }
    expect.assertions(1);
  });
});
