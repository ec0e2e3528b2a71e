-- CreateEnum
CREATE TYPE "agent_protocol" AS ENUM ('A2A', 'MCP');

-- CreateEnum
CREATE TYPE "agent_status" AS ENUM ('active', 'inactive');

-- CreateTable
CREATE TABLE "agents" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "protocol" "agent_protocol" NOT NULL,
    "endpoint_url" TEXT NOT NULL,
    "capabilities" JSONB,
    "agent_metadata" JSONB,
    "status" "agent_status" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_rate_limits" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "max_requests_per_second" INTEGER NOT NULL,
    "max_requests_per_minute" INTEGER NOT NULL,
    "max_requests_per_hour" INTEGER NOT NULL,

    CONSTRAINT "agent_rate_limits_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "project_agents" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "role" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),
    "live_agent_id" UUID,

    CONSTRAINT "project_agents_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "agents_tenant_id_created_at_id_idx" ON "agents"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "agents_id_tenant_id_key" ON "agents"("id", "tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "agent_rate_limits_agent_id_tenant_id_key" ON "agent_rate_limits"("agent_id", "tenant_id");

-- CreateIndex
CREATE INDEX "project_agents_project_id_created_at_id_idx" ON "project_agents"("project_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "project_agents_agent_id_idx" ON "project_agents"("agent_id");

-- CreateIndex
CREATE UNIQUE INDEX "project_agents_project_id_live_agent_id_key" ON "project_agents"("project_id", "live_agent_id");

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_rate_limits" ADD CONSTRAINT "agent_rate_limits_agent_id_tenant_id_fkey" FOREIGN KEY ("agent_id", "tenant_id") REFERENCES "agents"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_agents" ADD CONSTRAINT "project_agents_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_agents" ADD CONSTRAINT "project_agents_project_id_tenant_id_fkey" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_agents" ADD CONSTRAINT "project_agents_agent_id_tenant_id_fkey" FOREIGN KEY ("agent_id", "tenant_id") REFERENCES "agents"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;

