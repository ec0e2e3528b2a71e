import { ConflictError, parseInput, ValidationError, type ValidationIssue } from '@repo/errors';
import { z } from 'zod';
import { type Field, planSchemaChange, tableSchemaInput } from '../../src/adapters/warehouse/schema.js';

// The shape a route gives it: the table's schema inside a request body.
const body = z.object({ schema: tableSchemaInput });

function issuesOf(schema: unknown): ValidationIssue[] {
  try {
    parseInput(body, 'body', { schema });
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues;
  }
  throw new Error('expected a ValidationError');
}

function field(name: string, type: Field['type'] = 'STRING', extra: Partial<Field> = {}): Field {
  return { name, type, mode: 'NULLABLE', private: false, ...extra };
}

describe('tableSchemaInput', () => {
  it('normalises type aliases, case, defaults and null values', () => {
    const fields = tableSchemaInput.parse([
      { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
      { name: 'score', type: 'float' },
      { name: 'ok', type: 'BOOLEAN', mode: null, description: null, private: null },
      { name: 'tags', type: 'STRING', mode: 'repeated', description: 'Labels', private: true },
      { name: 'note', type: 'STRING', description: '' },
    ]);
    expect(fields).toEqual([
      { name: 'id', type: 'INT64', mode: 'REQUIRED', private: false },
      { name: 'score', type: 'FLOAT64', mode: 'NULLABLE', private: false },
      { name: 'ok', type: 'BOOL', mode: 'NULLABLE', private: false },
      { name: 'tags', type: 'STRING', mode: 'REPEATED', description: 'Labels', private: true },
      { name: 'note', type: 'STRING', mode: 'NULLABLE', private: false },
    ]);
  });

  it('accepts every contract type and the { fields } form', () => {
    const types = ['STRING', 'INT64', 'FLOAT64', 'NUMERIC', 'BOOL', 'DATE', 'DATETIME', 'TIMESTAMP', 'TIME', 'BYTES', 'JSON'];
    const fields = tableSchemaInput.parse({ fields: types.map((type, i) => ({ name: `c${i}`, type })) });
    expect(fields.map((f) => f.type)).toEqual(types);
  });

  it('points each issue at the column and key, under body.schema', () => {
    const issues = issuesOf([
      { name: 'a', type: 'STRING' },
      { name: 'b', type: 'STRING' },
      { name: 'c', type: 'VARCHAR' },
    ]);
    expect(issues).toEqual([
      { loc: ['body', 'schema', 2, 'type'], msg: expect.stringMatching(/^Expected one of STRING, INT64/), type: 'enum' },
    ]);
    expect(issuesOf({ fields: [{ name: '1st', type: 'STRING' }] })).toEqual([
      {
        loc: ['body', 'schema', 'fields', 0, 'name'],
        msg: expect.stringContaining('may not start with a digit'),
        type: 'string_pattern_mismatch',
      },
    ]);
  });

  it.each([
    ['a missing type', [{ name: 'a' }], ['body', 'schema', 0, 'type'], 'missing'],
    ['a missing name', [{ type: 'STRING' }], ['body', 'schema', 0, 'name'], 'missing'],
    ['an unknown key', [{ name: 'a', type: 'STRING', maxLength: 3 }], ['body', 'schema', 0, 'maxLength'], 'extra_forbidden'],
    ['a bad mode', [{ name: 'a', type: 'STRING', mode: 'OPTIONAL' }], ['body', 'schema', 0, 'mode'], 'enum'],
    ['a name with a hyphen', [{ name: 'a-b', type: 'STRING' }], ['body', 'schema', 0, 'name'], 'string_pattern_mismatch'],
    ['a name of 301 characters', [{ name: 'a'.repeat(301), type: 'STRING' }], ['body', 'schema', 0, 'name'], 'string_too_long'],
    ['a reserved prefix', [{ name: '_PARTITIONTIME', type: 'TIMESTAMP' }], ['body', 'schema', 0, 'name'], 'value_error'],
    ['a non-boolean private', [{ name: 'a', type: 'STRING', private: 'yes' }], ['body', 'schema', 0, 'private'], 'bool_type'],
    ['no columns', [], ['body', 'schema'], 'too_short'],
    ['a string', 'a STRING', ['body', 'schema'], 'list_type'],
    ['null', null, ['body', 'schema'], 'list_type'],
    ['no schema', undefined, ['body', 'schema'], 'missing'],
    ['an object without fields', {}, ['body', 'schema', 'fields'], 'missing'],
    ['extra keys beside fields', { fields: [{ name: 'a', type: 'STRING' }], x: 1 }, ['body', 'schema', 'x'], 'extra_forbidden'],
  ])('rejects %s', (_case, schema, loc, type) => {
    expect(issuesOf(schema)).toEqual([expect.objectContaining({ loc, type })]);
  });

  it('explains that nested RECORD columns are not supported', () => {
    const [issue] = issuesOf([{ name: 'r', type: 'RECORD' }]);
    expect(issue?.msg).toContain('RECORD/STRUCT columns are not supported, use JSON');
  });

  it('accepts 300-character names and rejects names that differ only in case', () => {
    expect(tableSchemaInput.parse([{ name: 'a'.repeat(300), type: 'STRING' }])).toHaveLength(1);
    expect(
      issuesOf([
        { name: 'Id', type: 'STRING' },
        { name: 'x', type: 'STRING' },
        { name: 'ID', type: 'INT64' },
      ]),
    ).toEqual([
      {
        loc: ['body', 'schema', 2, 'name'],
        msg: 'Duplicate column name "ID": column 0 has the same name (names are case-insensitive)',
        type: 'value_error',
      },
    ]);
  });
});

describe('planSchemaChange', () => {
  const base = [field('id', 'INT64', { mode: 'REQUIRED' }), field('name'), field('tags', 'STRING', { mode: 'REPEATED' })];

  // Changes a table with rows takes in place (and so an empty one too).
  it.each<[string, Field[], unknown[]]>([
    ['nothing', base, []],
    ['a NULLABLE column at the end', [...base, field('age', 'INT64')], [{ kind: 'add_column', field: field('age', 'INT64') }]],
    [
      'a REPEATED column at the end',
      [...base, field('ids', 'INT64', { mode: 'REPEATED' })],
      [{ kind: 'add_column', field: field('ids', 'INT64', { mode: 'REPEATED' }) }],
    ],
    ['REQUIRED relaxed to NULLABLE', [field('id', 'INT64'), base[1]!, base[2]!], [{ kind: 'relax_column', name: 'id' }]],
    [
      'a new description',
      [base[0]!, field('name', 'STRING', { description: 'Full name' }), base[2]!],
      [{ kind: 'set_description', name: 'name', description: 'Full name' }],
    ],
    [
      'a private flag',
      [base[0]!, field('name', 'STRING', { private: true }), base[2]!],
      [{ kind: 'set_private', name: 'name', private: true }],
    ],
  ])('with rows, applies %s in place', (_case, next, changes) => {
    expect(planSchemaChange(base, next, { tableHasRows: true })).toEqual({ kind: 'alter', changes });
    expect(planSchemaChange(base, next, { tableHasRows: false })).toEqual({ kind: 'alter', changes });
  });

  it('removes a description in place', () => {
    const described = [field('name', 'STRING', { description: 'Full name' })];
    expect(planSchemaChange(described, [field('name')], { tableHasRows: true })).toEqual({
      kind: 'alter',
      changes: [{ kind: 'set_description', name: 'name', description: undefined }],
    });
  });

  // Changes that would lose data or invalidate rows: refused with rows, a replacement when empty.
  it.each<[string, Field[], string]>([
    ['dropping a column', [base[0]!, base[2]!], 'column "name" would be dropped'],
    ['changing a type', [base[0]!, field('name', 'INT64'), base[2]!], 'column "name" would change type from STRING to INT64'],
    [
      'tightening NULLABLE to REQUIRED',
      [base[0]!, field('name', 'STRING', { mode: 'REQUIRED' }), base[2]!],
      'column "name" would change mode from NULLABLE to REQUIRED',
    ],
    [
      'turning a list into a scalar',
      [base[0]!, base[1]!, field('tags')],
      'column "tags" would change mode from REPEATED to NULLABLE',
    ],
    [
      'adding a REQUIRED column',
      [...base, field('age', 'INT64', { mode: 'REQUIRED' })],
      'new column "age" is REQUIRED, but the existing rows have no value for it',
    ],
    ['renaming a column', [base[0]!, field('Name'), base[2]!], 'column "name" would be dropped'],
    [
      'reordering columns',
      [base[1]!, base[0]!, base[2]!],
      'existing columns would be reordered (id, name, tags would become name, id, tags)',
    ],
    [
      'adding a column between existing ones',
      [base[0]!, field('age', 'INT64'), base[1]!, base[2]!],
      'new column "age" would come before existing columns (new columns go after them)',
    ],
  ])('with rows, refuses %s; on an empty table, replaces it', (_case, next, problem) => {
    let error: unknown;
    try {
      planSchemaChange(base, next, { tableHasRows: true });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).message).toContain(problem);
    expect((error as ConflictError).details).toEqual({ problems: expect.arrayContaining([problem]) });
    expect(planSchemaChange(base, next, { tableHasRows: false })).toEqual({ kind: 'replace', fields: next });
  });

  it('names every problem in one message', () => {
    expect(() => planSchemaChange(base, [field('id', 'STRING')], { tableHasRows: true })).toThrow(
      'The table has rows, so its schema cannot change this way: column "name" would be dropped; ' +
        'column "tags" would be dropped; column "id" would change type from INT64 to STRING. ' +
        'A table with rows can only get new NULLABLE or REPEATED columns after the existing ones, ' +
        'REQUIRED columns relaxed to NULLABLE, and new descriptions or private flags.',
    );
  });
});
