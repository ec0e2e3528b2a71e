-- CreateEnum
CREATE TYPE "query_job_status" AS ENUM ('PENDING', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED');

-- CreateEnum
CREATE TYPE "query_export_status" AS ENUM ('PENDING', 'RUNNING', 'DONE', 'FAILED');

-- CreateEnum
CREATE TYPE "export_format" AS ENUM ('CSV', 'JSON', 'AVRO', 'PARQUET');

-- CreateEnum
CREATE TYPE "export_compression" AS ENUM ('GZIP', 'DEFLATE', 'NONE');

-- CreateTable
CREATE TABLE "queries" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "query_text" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),

    CONSTRAINT "queries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "query_jobs" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "query_id" UUID NOT NULL,
    "status" "query_job_status" NOT NULL,
    "query_text" TEXT NOT NULL,
    "error_result" JSONB,
    "error_details" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "total_rows" BIGINT,
    "total_bytes_processed" BIGINT,
    "total_slot_ms" BIGINT,
    "cache_hit" BOOLEAN,
    "num_dml_affected_rows" BIGINT,
    "destination_table" JSONB,
    "statistics" JSONB,
    "result_columns" JSONB,
    "private_row_count" BIGINT,
    "cost_usd" DECIMAL(20,6),

    CONSTRAINT "query_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "query_exports" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "query_job_id" UUID NOT NULL,
    "status" "query_export_status" NOT NULL,
    "format" "export_format" NOT NULL,
    "compression" "export_compression" NOT NULL,
    "storage_key" TEXT,
    "signed_url" TEXT,
    "signed_expires_at" TIMESTAMPTZ(3),
    "error_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "query_exports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "query_quotas" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "daily_quota_usd" DECIMAL(20,6) NOT NULL,
    "monthly_quota_usd" DECIMAL(20,6) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "query_quotas_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "query_usage" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "daily_cost_usd" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "monthly_cost_usd" DECIMAL(20,6) NOT NULL DEFAULT 0,
    "last_reset_daily" TIMESTAMPTZ(3) NOT NULL,
    "last_reset_monthly" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "query_usage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "query_costs" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "query_id" UUID NOT NULL,
    "query_job_id" UUID NOT NULL,
    "bytes_processed" BIGINT NOT NULL,
    "cost_usd" DECIMAL(20,6) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "query_costs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "queries_tenant_id_created_at_id_idx" ON "queries"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "queries_project_id_created_at_id_idx" ON "queries"("project_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "queries_id_tenant_id_key" ON "queries"("id", "tenant_id");

-- CreateIndex
CREATE INDEX "query_jobs_tenant_id_created_at_id_idx" ON "query_jobs"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "query_jobs_query_id_created_at_id_idx" ON "query_jobs"("query_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "query_jobs_id_tenant_id_key" ON "query_jobs"("id", "tenant_id");

-- CreateIndex
CREATE INDEX "query_exports_query_job_id_created_at_id_idx" ON "query_exports"("query_job_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "query_quotas_tenant_id_key" ON "query_quotas"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "query_usage_tenant_id_key" ON "query_usage"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "query_costs_query_job_id_key" ON "query_costs"("query_job_id");

-- CreateIndex
CREATE INDEX "query_costs_tenant_id_created_at_id_idx" ON "query_costs"("tenant_id", "created_at", "id");

-- AddForeignKey
ALTER TABLE "queries" ADD CONSTRAINT "queries_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queries" ADD CONSTRAINT "queries_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_jobs" ADD CONSTRAINT "query_jobs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_jobs" ADD CONSTRAINT "query_jobs_query_id_tenant_id_fkey" FOREIGN KEY ("query_id", "tenant_id") REFERENCES "queries"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_exports" ADD CONSTRAINT "query_exports_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_exports" ADD CONSTRAINT "query_exports_query_job_id_tenant_id_fkey" FOREIGN KEY ("query_job_id", "tenant_id") REFERENCES "query_jobs"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_quotas" ADD CONSTRAINT "query_quotas_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_usage" ADD CONSTRAINT "query_usage_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "query_costs" ADD CONSTRAINT "query_costs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
