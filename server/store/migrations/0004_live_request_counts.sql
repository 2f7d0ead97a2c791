CREATE TABLE "live_request_counts" (
	"account_id" text NOT NULL,
	"shard" integer NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "live_request_counts_account_id_shard_pk" PRIMARY KEY("account_id","shard")
);
--> statement-breakpoint
ALTER TABLE "live_request_counts" ADD CONSTRAINT "live_request_counts_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- The counts so far move to shard 0.
INSERT INTO "live_request_counts" ("account_id", "shard", "count") SELECT "account_id", 0, "live_request_count" FROM "accounts" WHERE "live_request_count" > 0;--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "live_request_count";