DROP INDEX "workers_email_live";--> statement-breakpoint
DROP INDEX "workers_account";--> statement-breakpoint
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_account_id_key_pk";--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_account_id_mode_key_pk" PRIMARY KEY("account_id","mode","key");--> statement-breakpoint
ALTER TABLE "workers" ADD COLUMN "mode" text DEFAULT 'live' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "workers_email_workforce" ON "workers" USING btree (coalesce("account_id", ''),"mode",lower("email")) WHERE "workers"."status" <> 'removed';--> statement-breakpoint
CREATE INDEX "workers_email" ON "workers" USING btree (lower("email")) WHERE "workers"."status" <> 'removed';--> statement-breakpoint
CREATE INDEX "workers_account" ON "workers" USING btree ("account_id","mode","created_at","worker_id");--> statement-breakpoint
-- Data repair (decision 0013): the audit of a review by one of the operator's workers named its
-- global worker id; a customer sees such a worker only by its opaque handle for the account
-- (`opw_` + 24 hex, as in task assignments and quality figures), so the stored audits say that.
UPDATE "tasks" t SET "audits" = (
  SELECT jsonb_agg(CASE WHEN EXISTS (SELECT 1 FROM "workers" w WHERE w."worker_id" = a->>'audited_by' AND w."account_id" IS NULL)
      THEN jsonb_set(a, '{audited_by}', to_jsonb('opw_' || substr(encode(sha256(decode(t."account_id" || chr(10) || (a->>'audited_by'), 'escape')), 'hex'), 1, 24)))
      ELSE a END ORDER BY i)
  FROM jsonb_array_elements(t."audits") WITH ORDINALITY AS e(a, i))
WHERE t."mode" = 'live' AND EXISTS (
  SELECT 1 FROM jsonb_array_elements(t."audits") a JOIN "workers" w ON w."worker_id" = a->>'audited_by' WHERE w."account_id" IS NULL);
