-- AlterTable
ALTER TABLE "datasets" ADD COLUMN     "allow_exports" BOOLEAN NOT NULL DEFAULT true;

-- AlterTable
ALTER TABLE "tables" ADD COLUMN     "analysis_rule" JSONB;

-- AlterTable
ALTER TABLE "query_jobs" ADD COLUMN     "applied_rules" JSONB,
ADD COLUMN     "suppressed_row_count" BIGINT;

-- CreateTable
CREATE TABLE "query_job_reads" (
    "id" UUID NOT NULL,
    "query_job_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "owner_tenant_id" UUID NOT NULL,
    "dataset_id" UUID NOT NULL,
    "table_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "query_job_reads_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "query_job_reads_dataset_id_query_job_id_idx" ON "query_job_reads"("dataset_id", "query_job_id");

-- CreateIndex
CREATE UNIQUE INDEX "query_job_reads_query_job_id_table_id_key" ON "query_job_reads"("query_job_id", "table_id");

-- AddForeignKey
ALTER TABLE "query_job_reads" ADD CONSTRAINT "query_job_reads_query_job_id_tenant_id_fkey" FOREIGN KEY ("query_job_id", "tenant_id") REFERENCES "query_jobs"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_job_reads" ADD CONSTRAINT "query_job_reads_dataset_id_owner_tenant_id_fkey" FOREIGN KEY ("dataset_id", "owner_tenant_id") REFERENCES "datasets"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

