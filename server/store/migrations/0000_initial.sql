CREATE TABLE "accounts" (
	"account_id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"test_key_hash" text NOT NULL,
	"live_key_hash" text NOT NULL,
	"callback_auth_key" text NOT NULL,
	"signing_secret" text NOT NULL,
	"default_callback_url" text,
	"disabled_types" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"test_completion_delay_ms" integer DEFAULT 0 NOT NULL,
	"live_request_count" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "accounts_name_unique" UNIQUE("name"),
	CONSTRAINT "accounts_test_key_hash_unique" UNIQUE("test_key_hash"),
	CONSTRAINT "accounts_live_key_hash_unique" UNIQUE("live_key_hash")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"account_id" text NOT NULL,
	"key" text NOT NULL,
	"mode" text NOT NULL,
	"fingerprint" text NOT NULL,
	"status_code" integer NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_account_id_key_pk" PRIMARY KEY("account_id","key")
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"task_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"generation" text NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"instruction" text,
	"params" jsonb NOT NULL,
	"response" jsonb,
	"callback_url" text,
	"callback_completed" boolean,
	"urgency" text DEFAULT 'day' NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"completed_at" timestamp (3) with time zone,
	"customer_review_status" text,
	"times_redone" integer DEFAULT 0 NOT NULL,
	"metadata" jsonb NOT NULL,
	"project" text,
	"batch" text,
	"project_param_version" integer,
	"audits" jsonb NOT NULL,
	"unique_id" text,
	"tags" jsonb,
	"clear_unique_id_on_error" boolean DEFAULT false NOT NULL,
	"test_complete_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_keys_expiry" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_unique_id" ON "tasks" USING btree ("account_id","mode","unique_id") WHERE "tasks"."unique_id" is not null;--> statement-breakpoint
CREATE INDEX "tasks_list" ON "tasks" USING btree ("account_id","mode","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "tasks_test_due" ON "tasks" USING btree ("test_complete_at") WHERE "tasks"."test_complete_at" is not null;