import { ValidationError } from '@repo/errors';
import { mapTaskIds, readA2aMessage, v1ToV03Message, v1ToV03Result, v1ToV03Task } from '../../src/adapters/agents/a2a-shapes.js';

describe('readA2aMessage', () => {
  it('reads {"text"} as a user message with a new id', () => {
    const message = readA2aMessage({ text: 'hello', contextId: 'c-1' });
    expect(message).toEqual({ messageId: expect.any(String), role: 'ROLE_USER', contextId: 'c-1', parts: [{ text: 'hello' }] });
  });

  it('keeps a 1.0 message as it is, its id included, and drops fields of other protocols', () => {
    const input = {
      messageId: 'm-1',
      role: 'ROLE_USER',
      taskId: 't-1',
      parts: [
        { text: 'a' },
        { data: { n: 1 } },
        { url: 'https://files.example/a.pdf', mediaType: 'application/pdf', filename: 'a.pdf' },
      ],
      metadata: { k: 'v' },
      tool: 'echo',
    };
    const { tool: _tool, ...message } = input;
    expect(readA2aMessage(input)).toEqual(message);
  });

  it('converts a 0.3 message, told apart by its kinds or its lower-case role', () => {
    const v1 = readA2aMessage({
      kind: 'message',
      messageId: 'm-2',
      role: 'user',
      contextId: 'c-2',
      parts: [
        { kind: 'text', text: 'a' },
        { kind: 'data', data: { n: 1 } },
        { kind: 'file', file: { uri: 'https://files.example/a.pdf', mimeType: 'application/pdf', name: 'a.pdf' } },
        { kind: 'file', file: { bytes: 'aGVsbG8=' } },
      ],
    });
    expect(v1).toEqual({
      messageId: 'm-2',
      role: 'ROLE_USER',
      contextId: 'c-2',
      parts: [
        { text: 'a' },
        { data: { n: 1 } },
        { url: 'https://files.example/a.pdf', mediaType: 'application/pdf', filename: 'a.pdf' },
        { raw: 'aGVsbG8=' },
      ],
    });
    expect(readA2aMessage({ role: 'user', parts: [{ kind: 'text', text: 'b' }] }).parts).toEqual([{ text: 'b' }]);
  });

  it.each([
    [{}, ['body', 'message', 'text'], 'missing'],
    [{ text: 5 }, ['body', 'message', 'text'], 'string_type'],
    [{ parts: [] }, ['body', 'message', 'parts'], 'too_short'],
    [{ parts: [{ text: 'a', data: 1 }] }, ['body', 'message', 'parts', 0], 'value_error'],
    [{ parts: [{ kind: 'text' }] }, ['body', 'message', 'parts', 0, 'text'], 'missing'],
    [{ role: 'ROLE_BOSS', parts: [{ text: 'a' }] }, ['body', 'message', 'role'], 'enum'],
  ])('refuses %j, naming %j', (input, loc, type) => {
    let error: unknown;
    try {
      readA2aMessage(input);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]).toMatchObject({ loc, type });
  });
});

describe('between 1.0 and 0.3', () => {
  const v03 = {
    kind: 'message',
    messageId: 'm-1',
    role: 'agent',
    taskId: 't-1',
    contextId: 'c-1',
    parts: [
      { kind: 'text', text: 'hi', metadata: { lang: 'en' } },
      { kind: 'data', data: { n: 1 } },
      { kind: 'file', file: { uri: 'https://files.example/a.txt', mimeType: 'text/plain', name: 'a.txt' } },
      { kind: 'file', file: { bytes: 'aGVsbG8=' } },
    ],
  } as const;
  const v1 = {
    messageId: 'm-1',
    role: 'ROLE_AGENT',
    taskId: 't-1',
    contextId: 'c-1',
    parts: [
      { text: 'hi', metadata: { lang: 'en' } },
      { data: { n: 1 } },
      { url: 'https://files.example/a.txt', mediaType: 'text/plain', filename: 'a.txt' },
      { raw: 'aGVsbG8=' },
    ],
  };

  it('converts messages both ways', () => {
    expect(readA2aMessage(v03)).toEqual(v1);
    expect(v1ToV03Message(v1)).toEqual(v03);
  });

  it('wraps 1.0 data that is no object, which 0.3 data parts cannot hold', () => {
    expect(v1ToV03Message({ role: 'ROLE_AGENT', parts: [{ data: [1, 2] }] }).parts).toEqual([
      { kind: 'data', data: { value: [1, 2] } },
    ]);
  });

  it('converts tasks: states, status message, artifacts and history', () => {
    const task = {
      id: 't-1',
      contextId: 'c-1',
      status: {
        state: 'TASK_STATE_INPUT_REQUIRED',
        timestamp: '2026-01-01T00:00:00Z',
        message: { role: 'ROLE_AGENT', parts: [{ text: '?' }] },
      },
      artifacts: [{ artifactId: 'a-1', name: 'answer', parts: [{ text: '42' }] }],
      history: [{ messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'q' }] }],
    };
    expect(v1ToV03Task(task)).toEqual({
      kind: 'task',
      id: 't-1',
      contextId: 'c-1',
      status: {
        state: 'input-required',
        timestamp: '2026-01-01T00:00:00Z',
        message: { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: '?' }] },
      },
      artifacts: [{ artifactId: 'a-1', name: 'answer', parts: [{ kind: 'text', text: '42' }] }],
      history: [{ kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'q' }] }],
    });
    for (const [state, old] of [
      ['TASK_STATE_COMPLETED', 'completed'],
      ['TASK_STATE_AUTH_REQUIRED', 'auth-required'],
      ['TASK_STATE_UNSPECIFIED', 'unknown'],
    ]) {
      expect(v1ToV03Task({ id: 't', contextId: 'c', status: { state } }).status).toEqual({ state: old });
    }
  });

  it("unwraps 1.0's SendMessage result", () => {
    expect(v1ToV03Result({ message: { role: 'ROLE_AGENT', parts: [] } })).toEqual({ kind: 'message', role: 'agent', parts: [] });
    expect(v1ToV03Result({ task: { id: 't', contextId: 'c', status: {} } })).toMatchObject({ kind: 'task', id: 't' });
  });
});

describe('mapTaskIds', () => {
  const upper = (id: string) => id.toUpperCase();

  it('maps task and context ids wherever they are, and the ids of tasks, in either version', () => {
    const result = {
      task: {
        id: 't',
        contextId: 'c',
        status: { state: 'x', message: { messageId: 'm', taskId: 't', contextId: 'c' } },
        history: [{ messageId: 'm2', referenceTaskIds: ['r1', 'r2'] }],
        artifacts: [{ artifactId: 'a', parts: [{ data: { id: 'not-a-task' } }] }],
      },
    };
    expect(mapTaskIds(result, upper)).toEqual({
      task: {
        id: 'T',
        contextId: 'C',
        status: { state: 'x', message: { messageId: 'm', taskId: 'T', contextId: 'C' } },
        history: [{ messageId: 'm2', referenceTaskIds: ['R1', 'R2'] }],
        artifacts: [{ artifactId: 'a', parts: [{ data: { id: 'not-a-task' } }] }],
      },
    });
  });

  it("maps params.id of the methods that address a task by it, and no other method's", () => {
    expect(mapTaskIds({ id: 't', historyLength: 2 }, upper, 'GetTask')).toEqual({ id: 'T', historyLength: 2 });
    expect(mapTaskIds({ id: 't' }, upper, 'tasks/cancel')).toEqual({ id: 'T' });
    expect(mapTaskIds({ id: 'config', taskId: 't' }, upper, 'GetTaskPushNotificationConfig')).toEqual({
      id: 'config',
      taskId: 'T',
    });
    expect(mapTaskIds({ message: { messageId: 'm', contextId: 'c' } }, upper, 'SendMessage')).toEqual({
      message: { messageId: 'm', contextId: 'C' },
    });
  });
});
