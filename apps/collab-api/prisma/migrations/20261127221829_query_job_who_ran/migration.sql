-- Who ran a job, as it was then: the owners' access logs show it, and a later change of the user's
-- e-mail or the tenant's name must not rewrite it. Jobs from before get the values of now, the best known.
ALTER TABLE "query_jobs" ADD COLUMN "created_by_email" TEXT,
ADD COLUMN "tenant_name" TEXT;

UPDATE "query_jobs" j SET "tenant_name" = t."name" FROM "tenants" t WHERE t."id" = j."tenant_id";
UPDATE "query_jobs" j SET "created_by_email" = u."email" FROM "users" u WHERE u."id" = j."created_by_id" AND u."tenant_id" = j."tenant_id";

ALTER TABLE "query_jobs" ALTER COLUMN "tenant_name" SET NOT NULL;
