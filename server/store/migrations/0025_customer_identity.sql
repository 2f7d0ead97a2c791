CREATE TABLE "account_identity" (
	"account_id" text PRIMARY KEY NOT NULL,
	"require_totp" boolean DEFAULT false NOT NULL,
	"password_login" boolean DEFAULT true NOT NULL,
	"sso_issuer" text,
	"sso_client_id" text,
	"sso_client_secret" text,
	"sso_allowed_domains" jsonb,
	"sso_default_role" text,
	"sso_enabled" boolean DEFAULT false NOT NULL,
	"sso_updated_at" timestamp (3) with time zone,
	"test_key_used_at" timestamp (3) with time zone,
	"live_key_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "activity" (
	"activity_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"action" text NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" text,
	"actor_name" text,
	"target_type" text NOT NULL,
	"target_id" text,
	"mode" text,
	"address" text,
	"request_id" text,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"key_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"name" text NOT NULL,
	"scopes" text[] NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created_by" jsonb,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "member_links" (
	"link_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"member_id" text NOT NULL,
	"purpose" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone,
	"voided_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "member_sessions" (
	"session_id" text PRIMARY KEY NOT NULL,
	"member_id" text NOT NULL,
	"account_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"via" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"absolute_expires_at" timestamp (3) with time zone NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	"address" text,
	"user_agent" text,
	CONSTRAINT "member_sessions_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "members" (
	"member_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"email" text NOT NULL,
	"display_name" text,
	"role" text NOT NULL,
	"status" text NOT NULL,
	"password_hash" text,
	"totp_secret" text,
	"totp_pending" text,
	"totp_last_step" bigint,
	"sso_subject" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"last_login_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "sso_logins" (
	"login_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"state" text NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "account_identity" ADD CONSTRAINT "account_identity_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activity" ADD CONSTRAINT "activity_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member_links" ADD CONSTRAINT "member_links_member_id_members_member_id_fk" FOREIGN KEY ("member_id") REFERENCES "public"."members"("member_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member_sessions" ADD CONSTRAINT "member_sessions_member_id_members_member_id_fk" FOREIGN KEY ("member_id") REFERENCES "public"."members"("member_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "members" ADD CONSTRAINT "members_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "activity_account" ON "activity" USING btree ("account_id","at" DESC NULLS LAST,"activity_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "activity_at" ON "activity" USING btree ("at");--> statement-breakpoint
CREATE INDEX "api_keys_account" ON "api_keys" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "member_links_member" ON "member_links" USING btree ("member_id","purpose");--> statement-breakpoint
CREATE INDEX "member_sessions_member" ON "member_sessions" USING btree ("member_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "members_email_live" ON "members" USING btree ("account_id",lower("email")) WHERE "members"."status" <> 'removed';--> statement-breakpoint
CREATE UNIQUE INDEX "members_sso_subject" ON "members" USING btree ("account_id","sso_subject") WHERE "members"."sso_subject" is not null;--> statement-breakpoint
CREATE INDEX "members_account" ON "members" USING btree ("account_id","created_at");