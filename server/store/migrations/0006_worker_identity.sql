CREATE TABLE "worker_credentials" (
	"worker_id" text PRIMARY KEY NOT NULL,
	"password_hash" text NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "worker_tokens" (
	"token_id" text PRIMARY KEY NOT NULL,
	"worker_id" text NOT NULL,
	"kind" text NOT NULL,
	"token_hash" text NOT NULL,
	"name" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"absolute_expires_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	CONSTRAINT "worker_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "workers" (
	"worker_id" text PRIMARY KEY NOT NULL,
	"account_id" text,
	"email" text NOT NULL,
	"display_name" text NOT NULL,
	"status" text NOT NULL,
	"roles" text[] NOT NULL,
	"calibrator" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"last_seen_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "worker_credentials" ADD CONSTRAINT "worker_credentials_worker_id_workers_worker_id_fk" FOREIGN KEY ("worker_id") REFERENCES "public"."workers"("worker_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "worker_tokens" ADD CONSTRAINT "worker_tokens_worker_id_workers_worker_id_fk" FOREIGN KEY ("worker_id") REFERENCES "public"."workers"("worker_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workers" ADD CONSTRAINT "workers_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "worker_tokens_worker" ON "worker_tokens" USING btree ("worker_id","kind","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "workers_email_live" ON "workers" USING btree (lower("email")) WHERE "workers"."status" <> 'removed';--> statement-breakpoint
CREATE INDEX "workers_account" ON "workers" USING btree ("account_id","created_at","worker_id");