-- Archiving a user now releases its identity (`sub`), so that the person can accept another
-- tenant's invitation; users archived before keep theirs no longer.
UPDATE "users" SET "identity_provider_id" = NULL WHERE "archived_at" IS NOT NULL;
