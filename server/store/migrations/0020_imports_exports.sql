CREATE TABLE "export_chunks" (
	"export_id" text NOT NULL,
	"seq" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "export_chunks_export_id_seq_pk" PRIMARY KEY("export_id","seq")
);
--> statement-breakpoint
CREATE TABLE "exports" (
	"export_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"state" text NOT NULL,
	"format" text NOT NULL,
	"view" text NOT NULL,
	"filter_query" jsonb NOT NULL,
	"filters" jsonb NOT NULL,
	"options" jsonb NOT NULL,
	"tasks_total" bigint DEFAULT 0 NOT NULL,
	"tasks_written" bigint DEFAULT 0 NOT NULL,
	"skipped" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"size_bytes" bigint,
	"error" text,
	"lease_until" timestamp (3) with time zone,
	"lease_token" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "import_chunks" (
	"import_id" text NOT NULL,
	"seq" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "import_chunks_import_id_seq_pk" PRIMARY KEY("import_id","seq")
);
--> statement-breakpoint
CREATE TABLE "import_keys" (
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"key" text NOT NULL,
	"task_id" text NOT NULL,
	CONSTRAINT "import_keys_account_id_mode_key_pk" PRIMARY KEY("account_id","mode","key")
);
--> statement-breakpoint
CREATE TABLE "import_refused" (
	"import_id" text NOT NULL,
	"line" bigint NOT NULL,
	"status_code" integer NOT NULL,
	"error" text NOT NULL,
	"text" text,
	CONSTRAINT "import_refused_import_id_line_pk" PRIMARY KEY("import_id","line")
);
--> statement-breakpoint
CREATE TABLE "imports" (
	"import_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"state" text NOT NULL,
	"format" text NOT NULL,
	"settings" jsonb NOT NULL,
	"max_refused_share" double precision NOT NULL,
	"bytes_total" bigint DEFAULT 0 NOT NULL,
	"bytes_read" bigint DEFAULT 0 NOT NULL,
	"next_line" bigint DEFAULT 1 NOT NULL,
	"lines_read" bigint DEFAULT 0 NOT NULL,
	"created" bigint DEFAULT 0 NOT NULL,
	"duplicates" bigint DEFAULT 0 NOT NULL,
	"refused" bigint DEFAULT 0 NOT NULL,
	"batches" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" text,
	"lease_until" timestamp (3) with time zone,
	"lease_token" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "export_chunks" ADD CONSTRAINT "export_chunks_export_id_exports_export_id_fk" FOREIGN KEY ("export_id") REFERENCES "public"."exports"("export_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "exports" ADD CONSTRAINT "exports_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_chunks" ADD CONSTRAINT "import_chunks_import_id_imports_import_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."imports"("import_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_refused" ADD CONSTRAINT "import_refused_import_id_imports_import_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."imports"("import_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "imports" ADD CONSTRAINT "imports_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "exports_due" ON "exports" USING btree ("lease_until") WHERE "exports"."state" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "exports_expiry" ON "exports" USING btree ("expires_at") WHERE "exports"."state" = 'completed';--> statement-breakpoint
CREATE INDEX "imports_due" ON "imports" USING btree ("lease_until") WHERE "imports"."state" in ('receiving', 'fetching', 'queued', 'running');--> statement-breakpoint
CREATE INDEX "imports_account" ON "imports" USING btree ("account_id","mode","created_at");