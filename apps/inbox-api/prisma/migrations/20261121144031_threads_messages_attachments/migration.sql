-- CreateExtension
CREATE EXTENSION IF NOT EXISTS "pg_trgm";

-- CreateEnum
CREATE TYPE "MessageDirection" AS ENUM ('inbound', 'outbound');

-- CreateTable
CREATE TABLE "threads" (
    "id" UUID NOT NULL,
    "inbox_id" UUID NOT NULL,
    "subject" TEXT NOT NULL,
    "last_message_at" TIMESTAMPTZ(3) NOT NULL,
    "message_count" INTEGER NOT NULL DEFAULT 0,
    "participants" TEXT[],
    "summary" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "threads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" UUID NOT NULL,
    "thread_id" UUID NOT NULL,
    "inbox_id" UUID NOT NULL,
    "direction" "MessageDirection" NOT NULL,
    "provider_message_id" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_addresses" TEXT[],
    "cc_addresses" TEXT[],
    "bcc_addresses" TEXT[],
    "reply_to_addresses" TEXT[],
    "text" TEXT NOT NULL,
    "html" TEXT NOT NULL,
    "content_clean" TEXT NOT NULL,
    "preview" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "in_reply_to" TEXT,
    "references" TEXT,
    "labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "timestamp" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "search_text" TEXT NOT NULL,

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attachments" (
    "id" UUID NOT NULL,
    "message_id" UUID NOT NULL,
    "inbox_id" UUID NOT NULL,
    "thread_id" UUID NOT NULL,
    "filename" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "disposition" TEXT NOT NULL DEFAULT 'attachment',
    "storage_backend" TEXT NOT NULL,
    "storage_key" TEXT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attachments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "inbox_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("inbox_id","key")
);

-- CreateIndex
CREATE INDEX "threads_inbox_id_last_message_at_id_idx" ON "threads"("inbox_id", "last_message_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "messages_inbox_id_created_at_id_idx" ON "messages"("inbox_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "messages_thread_id_created_at_id_idx" ON "messages"("thread_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "messages_search_text_trgm_idx" ON "messages" USING GIN ("search_text" gin_trgm_ops);

-- CreateIndex
CREATE UNIQUE INDEX "messages_inbox_id_provider_message_id_key" ON "messages"("inbox_id", "provider_message_id");

-- CreateIndex
CREATE INDEX "attachments_message_id_idx" ON "attachments"("message_id");

-- CreateIndex
CREATE INDEX "attachments_inbox_id_created_at_idx" ON "attachments"("inbox_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "attachments_thread_id_created_at_idx" ON "attachments"("thread_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "inboxes_created_at_id_idx" ON "inboxes"("created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "threads" ADD CONSTRAINT "threads_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

