-- Inbound mail: threads are also found by their normalised subject (threads/threading.ts), and
-- Mailgun's webhook tokens are remembered so that a replayed request is refused.

-- AlterTable: existing threads get their subject without the common reply and forward prefixes.
ALTER TABLE "threads" ADD COLUMN "subject_key" TEXT NOT NULL DEFAULT '';
UPDATE "threads" SET "subject_key" = lower(btrim(regexp_replace(regexp_replace("subject", '\s+', ' ', 'g'), '^((re|fwd?|fw|aw|wg|sv|vs|antw)\s*:\s*)+', '', 'i')));
ALTER TABLE "threads" ALTER COLUMN "subject_key" DROP DEFAULT;

-- CreateTable
CREATE TABLE "webhook_tokens" (
    "token" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_tokens_pkey" PRIMARY KEY ("token")
);

-- CreateIndex
CREATE INDEX "threads_inbox_id_subject_key_last_message_at_idx" ON "threads"("inbox_id", "subject_key", "last_message_at" DESC);

-- CreateIndex
CREATE INDEX "webhook_tokens_expires_at_idx" ON "webhook_tokens"("expires_at");
