-- CreateEnum
CREATE TYPE "approval_kind" AS ENUM ('project_tenant', 'project_dataset');

-- CreateEnum
CREATE TYPE "approval_status" AS ENUM ('pending', 'approved', 'rejected', 'expired');

-- CreateTable
CREATE TABLE "approval_requests" (
    "id" UUID NOT NULL,
    "kind" "approval_kind" NOT NULL,
    "status" "approval_status" NOT NULL DEFAULT 'pending',
    "requested_by" UUID NOT NULL,
    "requester_tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "project_tenant_id" UUID NOT NULL,
    "reviewer_tenant_id" UUID NOT NULL,
    "dataset_id" UUID,
    "dataset_tenant_id" UUID,
    "reviewed_by" UUID,
    "reviewed_at" TIMESTAMPTZ(3),
    "rejection_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "pending_key" TEXT,

    CONSTRAINT "approval_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "project_tenants" (
    "id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "owner_tenant_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "approval_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "project_datasets" (
    "id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "dataset_id" UUID NOT NULL,
    "approval_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_datasets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "approval_requests_pending_key_key" ON "approval_requests"("pending_key");

-- CreateIndex
CREATE INDEX "approval_requests_reviewer_tenant_id_status_created_at_id_idx" ON "approval_requests"("reviewer_tenant_id", "status", "created_at", "id");

-- CreateIndex
CREATE INDEX "approval_requests_status_expires_at_idx" ON "approval_requests"("status", "expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "project_tenants_approval_id_key" ON "project_tenants"("approval_id");

-- CreateIndex
CREATE INDEX "project_tenants_tenant_id_created_at_id_idx" ON "project_tenants"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "project_tenants_project_id_tenant_id_key" ON "project_tenants"("project_id", "tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "project_datasets_approval_id_key" ON "project_datasets"("approval_id");

-- CreateIndex
CREATE INDEX "project_datasets_dataset_id_idx" ON "project_datasets"("dataset_id");

-- CreateIndex
CREATE UNIQUE INDEX "project_datasets_project_id_dataset_id_key" ON "project_datasets"("project_id", "dataset_id");

-- CreateIndex
CREATE UNIQUE INDEX "users_id_tenant_id_key" ON "users"("id", "tenant_id");

-- AddForeignKey
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_requested_by_requester_tenant_id_fkey" FOREIGN KEY ("requested_by", "requester_tenant_id") REFERENCES "users"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_reviewed_by_fkey" FOREIGN KEY ("reviewed_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_project_id_project_tenant_id_fkey" FOREIGN KEY ("project_id", "project_tenant_id") REFERENCES "projects"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_reviewer_tenant_id_fkey" FOREIGN KEY ("reviewer_tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approval_requests" ADD CONSTRAINT "approval_requests_dataset_id_dataset_tenant_id_fkey" FOREIGN KEY ("dataset_id", "dataset_tenant_id") REFERENCES "datasets"("id", "tenant_id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_tenants" ADD CONSTRAINT "project_tenants_project_id_owner_tenant_id_fkey" FOREIGN KEY ("project_id", "owner_tenant_id") REFERENCES "projects"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_tenants" ADD CONSTRAINT "project_tenants_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_tenants" ADD CONSTRAINT "project_tenants_approval_id_fkey" FOREIGN KEY ("approval_id") REFERENCES "approval_requests"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_datasets" ADD CONSTRAINT "project_datasets_dataset_id_tenant_id_fkey" FOREIGN KEY ("dataset_id", "tenant_id") REFERENCES "datasets"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_datasets" ADD CONSTRAINT "project_datasets_project_id_tenant_id_fkey" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "project_tenants"("project_id", "tenant_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_datasets" ADD CONSTRAINT "project_datasets_approval_id_fkey" FOREIGN KEY ("approval_id") REFERENCES "approval_requests"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

