-- CreateTable
CREATE TABLE "event_horizon" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "removed_through" BIGINT NOT NULL,

    CONSTRAINT "event_horizon_pkey" PRIMARY KEY ("id")
);


-- What the retention removed before this table existed is unknown: every id below the oldest event
-- kept counts as removed (as cursors were judged before), or every id drawn when none is kept.
INSERT INTO "event_horizon" ("id", "removed_through")
SELECT 1, coalesce(
  (SELECT min("id") - 1 FROM "events"),
  (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM "events_id_seq")
);
