-- Delivery status from the providers (issue 25): the provider's id of each sent message, which its
-- delivery events name, and where the message stands with it.

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('sent', 'delivered', 'bounced', 'complained', 'failed');

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "delivery_detail" JSONB,
ADD COLUMN     "delivery_status" "DeliveryStatus",
ADD COLUMN     "transport_message_id" TEXT;

-- CreateIndex
CREATE INDEX "messages_transport_message_id_idx" ON "messages"("transport_message_id");

-- Outbound mail sent or failed before this migration: its delivery status is the outbox's.
UPDATE "messages" SET "delivery_status" = "status"::text::"DeliveryStatus"
 WHERE "direction" = 'outbound' AND "status" IN ('sent', 'failed');
