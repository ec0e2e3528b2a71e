import type { Logger } from '@repo/http';
import type { LanguageModel } from '../adapters/llm/index.js';
import type { Database } from '../database.js';
import { summaryRequest } from './prompt.js';

export interface SummaryDeps {
  db: Database;
  model: LanguageModel;
  logger: Logger;
}

/**
 * Writes the thread's summary from its conversation as it is now (sends that failed left out, as
 * in the conversation view). A thread deleted meanwhile is skipped; a model failure throws, and
 * the job is retried with backoff.
 */
export async function summarizeThread(deps: SummaryDeps, threadId: string): Promise<void> {
  const thread = await deps.db.thread.findFirst({
    where: { id: threadId, inbox: { deletedAt: null } },
    select: { id: true, subject: true },
  });
  if (!thread) return;
  const messages = await deps.db.message.findMany({
    where: { threadId, status: { not: 'failed' } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { direction: true, fromAddress: true, contentClean: true, timestamp: true },
  });
  if (messages.length === 0) return;
  const summary = await deps.model.complete(
    summaryRequest({
      subject: thread.subject,
      messages: messages.map((message) => ({
        role: message.direction === 'inbound' ? 'user' : 'assistant',
        author: message.fromAddress,
        timestamp: message.timestamp,
        content: message.contentClean,
      })),
    }),
  );
  // updateMany: the thread may have gone while the model wrote.
  await deps.db.thread.updateMany({ where: { id: threadId }, data: { summary } });
  deps.logger.debug({ threadId, provider: deps.model.provider }, 'thread summarised');
}
