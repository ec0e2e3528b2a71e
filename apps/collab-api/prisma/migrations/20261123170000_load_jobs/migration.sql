-- Load jobs: a file loaded into a table by the background worker. The unique index on
-- running_table_id lets one job run per table, whichever replica starts it.

-- CreateEnum
CREATE TYPE "load_job_status" AS ENUM ('Pending', 'Running', 'Completed', 'Failed', 'Cancelled');

-- CreateEnum
CREATE TYPE "source_format" AS ENUM ('CSV', 'JSON', 'AVRO', 'PARQUET', 'ORC');

-- CreateEnum
CREATE TYPE "write_disposition" AS ENUM ('WRITE_APPEND', 'WRITE_TRUNCATE', 'WRITE_EMPTY');

-- CreateTable
CREATE TABLE "load_jobs" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "table_id" UUID NOT NULL,
    "status" "load_job_status" NOT NULL,
    "running_table_id" UUID,
    "storage_key" TEXT NOT NULL,
    "source_uri" TEXT NOT NULL,
    "source_format" "source_format" NOT NULL,
    "write_disposition" "write_disposition" NOT NULL,
    "autodetect" BOOLEAN NOT NULL,
    "rows_loaded" BIGINT,
    "bytes_processed" BIGINT,
    "duration_ms" INTEGER,
    "error_details" JSONB,
    "cancel_requested_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "load_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "load_jobs_running_table_id_key" ON "load_jobs"("running_table_id");

-- CreateIndex
CREATE INDEX "load_jobs_table_id_created_at_id_idx" ON "load_jobs"("table_id", "created_at", "id");

-- AddForeignKey
ALTER TABLE "load_jobs" ADD CONSTRAINT "load_jobs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "load_jobs" ADD CONSTRAINT "load_jobs_table_id_tenant_id_fkey" FOREIGN KEY ("table_id", "tenant_id") REFERENCES "tables"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;


