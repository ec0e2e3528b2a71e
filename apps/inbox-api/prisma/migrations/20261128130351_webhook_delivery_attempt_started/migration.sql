-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "attempt_started_at" TIMESTAMPTZ(3);

