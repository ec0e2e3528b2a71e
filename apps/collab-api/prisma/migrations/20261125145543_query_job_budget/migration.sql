-- AlterTable
ALTER TABLE "query_jobs" ADD COLUMN     "cancel_requested_at" TIMESTAMPTZ(3),
ADD COLUMN     "created_by_id" UUID,
ADD COLUMN     "queue_round" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "total_bytes_billed" BIGINT;

-- AlterTable: costs so far were charged by the bytes processed, which is what they billed.
ALTER TABLE "query_costs" ADD COLUMN     "bytes_billed" BIGINT;
UPDATE "query_costs" SET "bytes_billed" = "bytes_processed";
ALTER TABLE "query_costs" ALTER COLUMN "bytes_billed" SET NOT NULL;
UPDATE "query_jobs" SET "total_bytes_billed" = "total_bytes_processed" WHERE "status" = 'DONE';

-- CreateIndex
CREATE INDEX "query_jobs_status_tenant_id_queue_round_idx" ON "query_jobs"("status", "tenant_id", "queue_round");

-- AddForeignKey
ALTER TABLE "query_jobs" ADD CONSTRAINT "query_jobs_created_by_id_tenant_id_fkey" FOREIGN KEY ("created_by_id", "tenant_id") REFERENCES "users"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

