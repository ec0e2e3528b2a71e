-- Inbound Mailgun mail claims its token before storing the first copy, with the digest of the
-- request's fields, and marks it handled after the last (src/webhooks/replay.ts): a replay with other
-- fields is refused from the first copy on, while Mailgun's retry of a request cut short may finish it.
-- Rows written before (and delivery events' tokens) are handled.
ALTER TABLE "webhook_tokens" ADD COLUMN "request_digest" TEXT;
ALTER TABLE "webhook_tokens" ADD COLUMN "handled" BOOLEAN NOT NULL DEFAULT true;
