import { ValidationError } from '@repo/errors';
import {
  mapTaskIds,
  readA2aMessage,
  unboundId,
  v1ToV03Message,
  v1ToV03Result,
  v1ToV03Task,
} from '../../src/adapters/agents/a2a-shapes.js';

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

  it("maps the proto field names (snake_case) the agent's SDK also reads, in params and answers alike", () => {
    const params = {
      message: { message_id: 'm', task_id: 't', context_id: 'c', reference_task_ids: ['r1'], taskId: 't2' },
      task_push_notification_config: { task_id: 't3', push_notification_config: { id: 'config' } },
    };
    expect(mapTaskIds(params, upper, 'SendMessage')).toEqual({
      message: { message_id: 'm', task_id: 'T', context_id: 'C', reference_task_ids: ['R1'], taskId: 'T2' },
      task_push_notification_config: { task_id: 'T3', push_notification_config: { id: 'config' } },
    });
    expect(mapTaskIds({ task: { id: 't', context_id: 'c', status: {} } }, upper)).toEqual({
      task: { id: 'T', context_id: 'C', status: {} },
    });
  });
});

describe('unboundId', () => {
  it('finds a task or context id that is no string, in either spelling and at any depth, which mapTaskIds would pass unbound', () => {
    expect(unboundId({ id: ['t'] }, 'GetTask')).toBe('params.id');
    expect(unboundId({ message: { taskId: ['t'] } }, 'SendMessage')).toBe('params.message.taskId');
    expect(unboundId({ message: { context_id: 5 } }, 'message/send')).toBe('params.message.context_id');
    expect(unboundId({ a: [{ task_id: { t: 1 } }] }, 'SendMessage')).toBe('params.a[0].task_id');
    expect(unboundId({ message: { reference_task_ids: [['t']] } }, 'SendMessage')).toBe('params.message.reference_task_ids');
    expect(unboundId({ message: { referenceTaskIds: 't' } }, 'SendMessage')).toBe('params.message.referenceTaskIds');
  });

  it('passes strings and nulls, and any id that names no task', () => {
    expect(unboundId({ id: 't', historyLength: 2 }, 'GetTask')).toBeUndefined();
    expect(
      unboundId({ message: { taskId: 't', context_id: null, reference_task_ids: ['r'], referenceTaskIds: null } }, 'SendMessage'),
    ).toBeUndefined();
    // A push notification config's own id, and params.id of a method that addresses no task by it.
    expect(unboundId({ taskId: 't', id: ['config'] }, 'GetTaskPushNotificationConfig')).toBeUndefined();
    expect(unboundId(undefined, 'GetExtendedAgentCard')).toBeUndefined();
  });
});
