-- The event log: one row per change agents are told about (message received, sent, ...), written
-- in the transaction of the change. Append-only; ids are handed out in commit order (see
-- src/events/log.ts) and rows older than INBOX_EVENT_RETENTION_DAYS are deleted. No foreign keys:
-- an event outlives the inbox or message it reports.

-- CreateTable
CREATE TABLE "events" (
    "id" BIGSERIAL NOT NULL,
    "type" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "inbox_id" UUID NOT NULL,
    "thread_id" UUID,
    "message_id" UUID,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "events_organization_id_id_idx" ON "events"("organization_id", "id");

-- CreateIndex
CREATE INDEX "events_inbox_id_id_idx" ON "events"("inbox_id", "id");

-- CreateIndex
CREATE INDEX "events_created_at_idx" ON "events"("created_at");
