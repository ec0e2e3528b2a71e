-- to_tsvector's parser reads '<!--' as the start of an HTML comment and looks ahead for its end: a
-- text of many of them takes it quadratic time (80 KB of '<!--' in an inbound mail: 6.5 s of
-- Postgres, and 15 s of a stalled process on the embedded database). A comment marker is no word:
-- it is left out of what is indexed, and the vector is computed anew for every row.
DROP INDEX "message_search_vector_idx";
ALTER TABLE "message_search" DROP COLUMN "search_vector";
ALTER TABLE "message_search" ADD COLUMN "search_vector" tsvector
  GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, replace(split_part("search_text", E'\n', 1), '<!--', ' ')), 'A') ||
    setweight(to_tsvector('english'::regconfig, replace("search_text", '<!--', ' ')), 'D')
  ) STORED;
CREATE INDEX "message_search_vector_idx" ON "message_search" USING GIN ("search_vector");
