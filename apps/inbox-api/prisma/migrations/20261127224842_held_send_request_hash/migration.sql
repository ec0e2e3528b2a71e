-- AlterTable
ALTER TABLE "drafts" ADD COLUMN     "idempotency_request_hash" TEXT;

