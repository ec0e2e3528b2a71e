import { taskKeyFrom } from '../../src/tasks/task-id.js';

/** The task-id key of in-process servers in tests (processes are given INBOX_MCP_TASK_KEY). */
export const TEST_TASK_KEY = taskKeyFrom('inbox-mcp test task key');
