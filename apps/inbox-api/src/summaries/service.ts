import type { Logger } from '@repo/http';
import type { SendOptions } from '@repo/jobs';
import type { LanguageModel } from '../adapters/llm/index.js';
import { type Database, prismaStatements } from '../database.js';
import { appendEvents } from '../events/log.js';
import { Prisma } from '../generated/prisma/client.js';
import type { JobQueue } from '../jobs/queue.js';
import { threadLabels, toThreadSummary } from '../threads/service.js';
import { MAX_PROMPT_MESSAGES, MESSAGE_BUDGET_CHARS, summaryRequest } from './prompt.js';

/**
 * Asks for a thread's summary to be written again, `debounceSeconds` after its newest message:
 * queued in the transaction that records the message (so a crash loses neither), and while one
 * request of the thread waits, another adds nothing. Does nothing while summaries are off.
 */
export interface SummaryRequests {
  /** Whether a request queues a job (summaries are on). */
  enabled: boolean;
  request(tx: NonNullable<SendOptions['tx']>, threadId: string): Promise<void>;
}

export function summaryRequests(options: { jobs: JobQueue; enabled: boolean; debounceSeconds: number }): SummaryRequests {
  return {
    enabled: options.enabled,
    async request(tx, threadId) {
      if (!options.enabled) return;
      await options.jobs.send(
        'summarize-thread',
        { thread_id: threadId },
        { tx, key: threadId, delaySeconds: options.debounceSeconds },
      );
    },
  };
}

export interface SummaryDeps {
  db: Database;
  /** Unset while summaries are off (LLM_PROVIDER unset): requests queued before are dropped. */
  languageModel: LanguageModel | undefined;
  logger: Logger;
}

/**
 * Writes the thread's summary from its conversation as it is now (sends that failed left out, as
 * in the conversation view). A thread deleted meanwhile is skipped; a model failure throws, and
 * the job is retried with backoff.
 */
export async function summarizeThread(deps: SummaryDeps, threadId: string): Promise<void> {
  const model = deps.languageModel;
  if (!model) return;
  const thread = await deps.db.thread.findFirst({
    where: { id: threadId, inbox: { deletedAt: null } },
    select: { id: true, subject: true },
  });
  if (!thread) return;
  // The newest messages that can fit in the prompt, each cut just past its share: a thread of
  // hundreds of megabytes is read as a few (the cut made after the sort, which LIMIT lets Postgres do).
  const where = Prisma.sql`thread_id = ${threadId}::uuid AND status <> 'failed'`;
  const newest = await deps.db.$queryRaw<{ direction: string; from_address: string; content: string; timestamp: Date }[]>`
    SELECT direction::text AS direction, from_address, left(content_clean, ${MESSAGE_BUDGET_CHARS + 1}) AS content, timestamp
      FROM messages WHERE ${where}
     ORDER BY created_at DESC, id DESC
     LIMIT ${MAX_PROMPT_MESSAGES}`;
  if (newest.length === 0) return;
  const [{ count }] = await deps.db.$queryRaw<[{ count: number }]>`SELECT count(*)::int AS count FROM messages WHERE ${where}`;
  const summary = await model.complete(
    summaryRequest({
      subject: thread.subject,
      messages: newest.reverse().map((message) => ({
        role: message.direction === 'inbound' ? 'user' : 'assistant',
        author: message.from_address,
        timestamp: message.timestamp,
        content: message.content,
      })),
      messageCount: count,
    }),
  );
  const labels = (await threadLabels(deps.db, [threadId])).get(threadId);
  await deps.db.$transaction(async (tx) => {
    // updateMany: the thread may have gone while the model wrote.
    const { count } = await tx.thread.updateMany({ where: { id: threadId }, data: { summary } });
    if (count === 0) return;
    const updated = await tx.thread.findUniqueOrThrow({
      where: { id: threadId },
      include: { inbox: { select: { organizationId: true } } },
    });
    const { inbox, ...record } = updated;
    await appendEvents(prismaStatements(tx), [
      {
        type: 'thread.summarized',
        organizationId: inbox.organizationId,
        inboxId: record.inboxId,
        threadId: record.id,
        messageId: null,
        data: toThreadSummary(record, labels),
      },
    ]);
  });
  deps.logger.debug({ threadId, provider: model.provider }, 'thread summarised');
}
