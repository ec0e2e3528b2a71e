-- AlterTable
ALTER TABLE "queries" ADD COLUMN     "description" TEXT,
ADD COLUMN     "name" TEXT;

-- AlterTable
ALTER TABLE "query_jobs" ADD COLUMN     "maximum_bytes_billed" BIGINT,
ADD COLUMN     "results_deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "results_expire_at" TIMESTAMPTZ(3),
ADD COLUMN     "timeout_seconds" INTEGER;

-- CreateIndex
CREATE INDEX "query_jobs_results_expire_at_idx" ON "query_jobs"("results_expire_at");


-- Results stored before expiry existed expire as new ones do by default, 7 days after their job ended.
UPDATE "query_jobs" SET "results_expire_at" = "ended_at" + interval '7 days' WHERE "status" = 'DONE';
