import { openTaskId, sealTaskId, taskKeyFrom, type WaitTask } from '../src/tasks/task-id.js';
import { RETENTION_AFTER_DEADLINE_MS, expiresAt, stateOf } from '../src/tasks/wait-tasks.js';
import type { ReceivedEvent } from '../src/tools/wait-for-reply.js';

const key = taskKeyFrom('a secret');
const task: WaitTask = {
  thread: 'thread-1',
  after: 42,
  created: 1_700_000_000_000,
  deadline: 1_700_000_060_000,
  caller: 'digest',
};

describe('task ids', () => {
  it('open to the task they were sealed from, and say nothing of it in the clear', () => {
    const id = sealTaskId(key, task);
    expect(openTaskId(key, id)).toEqual(task);
    expect(id).toMatch(/^w1\.[\w-]+$/);
    expect(id).not.toContain('thread-1');
    expect(Buffer.from(id.slice(3), 'base64url').toString('latin1')).not.toContain('thread-1');
    // A random IV: the same task sealed twice gives two ids.
    expect(sealTaskId(key, task)).not.toBe(id);
  });

  it('refuse whatever this key did not seal: forged, altered, truncated, another key, another version', () => {
    const id = sealTaskId(key, task);
    const body = Buffer.from(id.slice(3), 'base64url');
    const flipped = Buffer.from(body);
    flipped[20] = (flipped[20] ?? 0) ^ 1;
    for (const forged of [
      '',
      'w1.',
      'w1.AAAA',
      'not a task',
      `w1.${flipped.toString('base64url')}`,
      id.slice(0, -4),
      `${id}.x`,
      `w2.${id.slice(3)}`,
      sealTaskId(taskKeyFrom('another secret'), task),
    ]) {
      expect(openTaskId(key, forged)).toBeUndefined();
    }
  });
});

describe('task state', () => {
  const event = (createdAt: number) =>
    ({
      id: 43,
      type: 'message.received',
      created_at: new Date(createdAt).toISOString(),
      thread_id: 'thread-1',
      data: { id: 'message-1' },
    }) as unknown as ReceivedEvent;

  it('is working before the deadline without a reply', () => {
    expect(stateOf(task, undefined, task.deadline - 1)).toEqual({ status: 'working' });
  });

  it('completes with the reply logged by the deadline, whenever it is read', () => {
    const state = stateOf(task, event(task.created + 5000), task.deadline + 10_000);
    expect(state).toMatchObject({ status: 'completed', at: task.created + 5000 });
    expect(state.status === 'completed' && state.result.structuredContent).toMatchObject({
      status: 'replied',
      waited_seconds: 5,
    });
  });

  it('completes timed out at the deadline, and stays so when a reply is logged after it', () => {
    for (const late of [undefined, event(task.deadline + 1)]) {
      const state = stateOf(task, late, task.deadline);
      expect(state).toMatchObject({ status: 'completed', at: task.deadline });
      expect(state.status === 'completed' && state.result.structuredContent).toEqual({
        status: 'timed_out',
        thread_id: 'thread-1',
        waited_seconds: 60,
      });
    }
  });

  it('is kept for an hour after its deadline', () => {
    expect(expiresAt(task)).toBe(task.deadline + RETENTION_AFTER_DEADLINE_MS);
  });
});
