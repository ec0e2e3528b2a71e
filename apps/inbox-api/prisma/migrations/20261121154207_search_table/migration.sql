-- Search text moves to a narrow table of its own, so that a search reads the inbox's text alone
-- instead of its whole message rows (see bench/run.ts for the measurements).

-- CreateExtension
CREATE EXTENSION IF NOT EXISTS "btree_gin";

-- CreateTable
CREATE TABLE "message_search" (
    "message_id" UUID NOT NULL,
    "inbox_id" UUID NOT NULL,
    "thread_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "search_text" TEXT NOT NULL,

    CONSTRAINT "message_search_pkey" PRIMARY KEY ("message_id")
);

-- Backfill before the column goes, and before the indexes exist (building them once is faster).
INSERT INTO "message_search" ("message_id", "inbox_id", "thread_id", "created_at", "search_text")
SELECT "id", "inbox_id", "thread_id", "created_at", "search_text" FROM "messages";

-- CreateIndex
CREATE INDEX "message_search_text_idx" ON "message_search" USING GIN ("inbox_id" uuid_ops, "search_text" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "message_search_inbox_id_created_at_message_id_idx" ON "message_search"("inbox_id", "created_at" DESC, "message_id" DESC);

-- CreateIndex
CREATE INDEX "message_search_thread_id_created_at_message_id_idx" ON "message_search"("thread_id", "created_at" DESC, "message_id" DESC);

-- AddForeignKey
ALTER TABLE "message_search" ADD CONSTRAINT "message_search_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Last: dropping the column locks messages exclusively until the migration commits.
DROP INDEX "messages_search_text_trgm_idx";
ALTER TABLE "messages" DROP COLUMN "search_text";
