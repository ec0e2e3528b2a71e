-- Organizations and their API keys. Every inbox belongs to an organization: the inboxes there are
-- (by the column's default) and any that names none go to `default`, which this migration makes
-- and the service never deletes. Messages remember the key that sent them, so that revoking a key
-- can wait for its sends under way.

-- CreateEnum
CREATE TYPE "ApiKeyPermission" AS ENUM ('read', 'send', 'manage', 'approve');

-- AlterTable
ALTER TABLE "inboxes" ADD COLUMN     "organization_id" TEXT NOT NULL DEFAULT 'default';

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "api_key_id" UUID;

-- CreateTable
CREATE TABLE "organizations" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

INSERT INTO "organizations" ("id", "name") VALUES ('default', 'default');

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "inbox_ids" UUID[],
    "permissions" "ApiKeyPermission"[],
    "rate_limit_per_minute" INTEGER,
    "send_limit_per_hour" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "organizations_created_at_id_idx" ON "organizations"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_secret_hash_key" ON "api_keys"("secret_hash");

-- CreateIndex
CREATE INDEX "api_keys_organization_id_created_at_id_idx" ON "api_keys"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inboxes_organization_id_created_at_id_idx" ON "inboxes"("organization_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inboxes" ADD CONSTRAINT "inboxes_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

