-- The warehouse outbox: a change of the warehouse is recorded with its dataset or table record,
-- applied outside any transaction, and removed with the record's outcome; the reconciler finishes
-- the changes a crash interrupted. No change was ever recorded before this, so there is nothing to carry over.

-- CreateEnum
CREATE TYPE "warehouse_change_kind" AS ENUM ('create_dataset', 'update_dataset', 'delete_dataset', 'create_table', 'update_table', 'delete_table', 'repair');

-- CreateTable
CREATE TABLE "warehouse_changes" (
    "id" UUID NOT NULL,
    "kind" "warehouse_change_kind" NOT NULL,
    "record_id" UUID NOT NULL,
    "tenant_id" UUID,
    "involves" UUID[],
    "held_name" TEXT,
    "plan" JSONB NOT NULL,
    "previous" JSONB,
    "lease_until" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "warehouse_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "warehouse_changes_record_id_key" ON "warehouse_changes"("record_id");

-- CreateIndex
CREATE INDEX "warehouse_changes_lease_until_idx" ON "warehouse_changes"("lease_until");


-- A rename that raced a delete could write a name back onto the record the delete had just
-- archived, which then held that name for good: archived records hold none.
UPDATE "datasets" SET "live_name" = NULL WHERE "archived_at" IS NOT NULL AND "live_name" IS NOT NULL;
UPDATE "tables" SET "live_name" = NULL WHERE "archived_at" IS NOT NULL AND "live_name" IS NOT NULL;
