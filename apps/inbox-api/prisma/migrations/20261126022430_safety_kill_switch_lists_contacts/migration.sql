-- CreateEnum
CREATE TYPE "ListDirection" AS ENUM ('send', 'receive');

-- CreateEnum
CREATE TYPE "ListType" AS ENUM ('allow', 'block');

-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "sending_enabled" BOOLEAN NOT NULL DEFAULT true;

-- AlterTable
ALTER TABLE "inboxes" ADD COLUMN     "sending_enabled" BOOLEAN NOT NULL DEFAULT true;

-- CreateTable
CREATE TABLE "list_entries" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "inbox_id" UUID,
    "direction" "ListDirection" NOT NULL,
    "type" "ListType" NOT NULL,
    "entry" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "list_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inbox_contacts" (
    "inbox_id" UUID NOT NULL,
    "address" TEXT NOT NULL,
    "first_sent_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_contacts_pkey" PRIMARY KEY ("inbox_id","address")
);

-- CreateIndex
CREATE INDEX "list_entries_organization_id_direction_created_at_id_idx" ON "list_entries"("organization_id", "direction", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "list_entries_inbox_id_direction_idx" ON "list_entries"("inbox_id", "direction");

-- CreateIndex
CREATE INDEX "inbox_contacts_inbox_id_first_sent_at_idx" ON "inbox_contacts"("inbox_id", "first_sent_at");

-- AddForeignKey
ALTER TABLE "list_entries" ADD CONSTRAINT "list_entries_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "list_entries" ADD CONSTRAINT "list_entries_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inbox_contacts" ADD CONSTRAINT "inbox_contacts_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

