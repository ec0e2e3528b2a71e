-- CreateEnum
CREATE TYPE "role" AS ENUM ('Dataset user', 'Dataset editor', 'Org admin');

-- CreateEnum
CREATE TYPE "table_job_kind" AS ENUM ('import', 'export');

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" "role" NOT NULL DEFAULT 'Dataset user',
    "identity_provider_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),
    "live_email" TEXT,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "projects" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),

    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "datasets" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),
    "live_name" TEXT,

    CONSTRAINT "datasets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tables" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "dataset_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "schema" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),
    "live_name" TEXT,

    CONSTRAINT "tables_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "table_jobs" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "table_id" UUID NOT NULL,
    "kind" "table_job_kind" NOT NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),

    CONSTRAINT "table_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "users_identity_provider_id_key" ON "users"("identity_provider_id");

-- CreateIndex
CREATE INDEX "users_tenant_id_created_at_id_idx" ON "users"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "users_email_idx" ON "users"("email");

-- CreateIndex
CREATE UNIQUE INDEX "users_tenant_id_live_email_key" ON "users"("tenant_id", "live_email");

-- CreateIndex
CREATE INDEX "projects_tenant_id_created_at_id_idx" ON "projects"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "projects_id_tenant_id_key" ON "projects"("id", "tenant_id");

-- CreateIndex
CREATE INDEX "datasets_tenant_id_created_at_id_idx" ON "datasets"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "datasets_project_id_created_at_id_idx" ON "datasets"("project_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "datasets_id_tenant_id_key" ON "datasets"("id", "tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "datasets_project_id_live_name_key" ON "datasets"("project_id", "live_name");

-- CreateIndex
CREATE INDEX "tables_tenant_id_created_at_id_idx" ON "tables"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "tables_dataset_id_created_at_id_idx" ON "tables"("dataset_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "tables_id_tenant_id_key" ON "tables"("id", "tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "tables_dataset_id_live_name_key" ON "tables"("dataset_id", "live_name");

-- CreateIndex
CREATE INDEX "table_jobs_tenant_id_kind_created_at_id_idx" ON "table_jobs"("tenant_id", "kind", "created_at", "id");

-- CreateIndex
CREATE INDEX "table_jobs_table_id_kind_created_at_id_idx" ON "table_jobs"("table_id", "kind", "created_at", "id");

-- CreateIndex
CREATE INDEX "tenants_created_at_id_idx" ON "tenants"("created_at", "id");

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "projects" ADD CONSTRAINT "projects_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "datasets" ADD CONSTRAINT "datasets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "datasets" ADD CONSTRAINT "datasets_project_id_tenant_id_fkey" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tables" ADD CONSTRAINT "tables_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tables" ADD CONSTRAINT "tables_dataset_id_tenant_id_fkey" FOREIGN KEY ("dataset_id", "tenant_id") REFERENCES "datasets"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "table_jobs" ADD CONSTRAINT "table_jobs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "table_jobs" ADD CONSTRAINT "table_jobs_table_id_tenant_id_fkey" FOREIGN KEY ("table_id", "tenant_id") REFERENCES "tables"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

