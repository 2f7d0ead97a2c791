-- BEGIN hand-written (issue 21): the token buckets that every server process on this database shares
-- (the per-key rate limit, failed authentications per client address). UNLOGGED: a bucket is
-- written on every request, and a commit that touched only unlogged tables does not wait for the
-- WAL flush; a crash empties the table, which only refills the buckets. Not in schema.ts: only
-- store/buckets.ts uses it, through its own statement.
CREATE UNLOGGED TABLE "rate_limit_buckets" (
	"key" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"taken" double precision NOT NULL,
	"refilled_at" timestamp with time zone NOT NULL,
	"full_at" timestamp with time zone NOT NULL
);--> statement-breakpoint
CREATE INDEX "rate_limit_buckets_full_at" ON "rate_limit_buckets" ("full_at");
-- END hand-written (issue 21)
