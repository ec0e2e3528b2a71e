-- GET /v1/search ranks the newest matches only (src/search/service.ts): for a word most messages
-- contain, reading message_search newest first across inboxes finds them without reading the rest.
CREATE INDEX "message_search_created_at_message_id_idx" ON "message_search"("created_at" DESC, "message_id" DESC);
