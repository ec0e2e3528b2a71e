-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "inbox_id" UUID;


-- The inbox of each delivery whose event is still kept.
UPDATE "webhook_deliveries" d SET "inbox_id" = e."inbox_id" FROM "events" e WHERE e."id" = d."event_id";
