-- Sending becomes an outbox: an outbound message is recorded `sending` before the transport is
-- called, then `sent` or `failed`; a lease lets the reconciler resolve sends a crash interrupted.
-- A message sent to the inbox's own address is stored twice (sent and received): the Message-ID is
-- unique per inbox and direction. Inboxes are marked while their delete is under way, and objects
-- written ahead of their record are journaled in pending_objects.

-- CreateEnum
CREATE TYPE "MessageStatus" AS ENUM ('received', 'sending', 'sent', 'failed');

-- DropIndex
DROP INDEX "messages_inbox_id_provider_message_id_key";

-- AlterTable
ALTER TABLE "inboxes" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3);

-- AlterTable: messages stored so far were received, or sent (they were recorded after the transport).
ALTER TABLE "messages" ADD COLUMN     "lease_until" TIMESTAMPTZ(3),
ADD COLUMN     "status" "MessageStatus" NOT NULL DEFAULT 'received';
UPDATE "messages" SET "status" = 'sent' WHERE "direction" = 'outbound';
ALTER TABLE "messages" ALTER COLUMN "status" DROP DEFAULT;

-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN     "message_id" UUID;

-- CreateTable
CREATE TABLE "pending_objects" (
    "storage_key" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "pending_objects_pkey" PRIMARY KEY ("storage_key")
);

-- CreateIndex
CREATE INDEX "idempotency_keys_message_id_idx" ON "idempotency_keys"("message_id");

-- CreateIndex
CREATE INDEX "pending_objects_expires_at_idx" ON "pending_objects"("expires_at");

-- CreateIndex
CREATE INDEX "messages_status_lease_until_idx" ON "messages"("status", "lease_until");

-- CreateIndex
CREATE UNIQUE INDEX "messages_inbox_id_direction_provider_message_id_key" ON "messages"("inbox_id", "direction", "provider_message_id");

