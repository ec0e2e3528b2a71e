-- System labels (src/messages/labels.ts): inbound messages carry `received` and `unread`, sent ones `sent`.
-- Existing rows gain them, ahead of the labels they already had (`spam`, `unauthenticated`).
UPDATE "messages"
   SET "labels" = ARRAY['received', 'unread']::text[] || array_remove(array_remove("labels", 'received'), 'unread')
 WHERE "direction" = 'inbound' AND NOT ("labels" @> ARRAY['received']::text[]);

UPDATE "messages"
   SET "labels" = ARRAY['sent']::text[] || array_remove("labels", 'sent')
 WHERE "direction" = 'outbound' AND NOT ("labels" @> ARRAY['sent']::text[]);
