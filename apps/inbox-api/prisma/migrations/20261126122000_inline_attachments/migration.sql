-- Small attachments are kept in their own row (storage_backend 'inline', src/messages/attachments.ts):
-- written in the message's transaction, they need no file, no flush to disk and no journal row. A row
-- has its bytes (content) or its object's key (storage_key), never both.
ALTER TABLE "attachments" ADD COLUMN "content" BYTEA;
ALTER TABLE "attachments" ALTER COLUMN "storage_key" DROP NOT NULL;
