-- CreateEnum
CREATE TYPE "SendPolicy" AS ENUM ('direct', 'approval');

-- CreateEnum
CREATE TYPE "DraftStatus" AS ENUM ('draft', 'pending_approval', 'scheduled', 'sent', 'rejected', 'cancelled');

-- AlterTable
ALTER TABLE "inboxes" ADD COLUMN     "send_policy" "SendPolicy" NOT NULL DEFAULT 'direct';

-- CreateTable
CREATE TABLE "drafts" (
    "id" UUID NOT NULL,
    "inbox_id" UUID NOT NULL,
    "status" "DraftStatus" NOT NULL,
    "input" JSONB NOT NULL,
    "origin" JSONB,
    "send_at" TIMESTAMPTZ(3),
    "created_by" UUID,
    "idempotency_key" TEXT,
    "approved_at" TIMESTAMPTZ(3),
    "approved_by" TEXT,
    "rejected_at" TIMESTAMPTZ(3),
    "rejection_reason" TEXT,
    "message_id" UUID,
    "sent_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "drafts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "drafts_inbox_id_created_at_id_idx" ON "drafts"("inbox_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "drafts_inbox_id_status_created_at_id_idx" ON "drafts"("inbox_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "drafts_inbox_id_idempotency_key_key" ON "drafts"("inbox_id", "idempotency_key");

-- AddForeignKey
ALTER TABLE "drafts" ADD CONSTRAINT "drafts_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

