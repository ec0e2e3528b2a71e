-- Attachment lists are newest first with the id as tie-breaker (attachments of one message share
-- created_at), and the `database` storage backend keeps objects in stored_objects.

-- DropIndex
DROP INDEX "attachments_inbox_id_created_at_idx";

-- DropIndex
DROP INDEX "attachments_thread_id_created_at_idx";

-- CreateTable
CREATE TABLE "stored_objects" (
    "key" TEXT NOT NULL,
    "content" BYTEA NOT NULL,
    "content_type" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stored_objects_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "stored_objects_key_idx" ON "stored_objects" USING SPGIST ("key" text_ops);

-- CreateIndex
CREATE INDEX "attachments_inbox_id_created_at_id_idx" ON "attachments"("inbox_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "attachments_thread_id_created_at_id_idx" ON "attachments"("thread_id", "created_at" DESC, "id" DESC);
