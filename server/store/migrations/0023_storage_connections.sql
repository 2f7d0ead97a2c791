CREATE TABLE "storage_connections" (
	"connection_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"provider" text NOT NULL,
	"bucket" text NOT NULL,
	"endpoint" text NOT NULL,
	"region" text NOT NULL,
	"path_style" boolean NOT NULL,
	"access_key_id" text NOT NULL,
	"secret_access_key" text NOT NULL,
	"media" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "storage_connections" ADD CONSTRAINT "storage_connections_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "storage_connections_bucket" ON "storage_connections" USING btree ("account_id","mode","provider","bucket");