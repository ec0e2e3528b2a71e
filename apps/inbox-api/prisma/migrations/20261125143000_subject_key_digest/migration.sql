-- threads.subject_key holds the SHA-256 (hex) of the normalised subject instead of the subject
-- itself (threads/threading.ts, subjectKey), so that its index takes subjects of any length: a
-- btree row holds ~2.7 KB at most, and a subject of 998 emoji is 3 KB. Keys already stored are
-- normalised subjects: their digest is what the service computes for the same subject.
UPDATE "threads" SET "subject_key" = encode(sha256(convert_to("subject_key", 'UTF8')), 'hex') WHERE "subject_key" <> '';
