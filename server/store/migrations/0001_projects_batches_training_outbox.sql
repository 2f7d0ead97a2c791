CREATE TABLE "batches" (
	"batch_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"name" text NOT NULL,
	"project" text NOT NULL,
	"status" text NOT NULL,
	"callback" text,
	"metadata" jsonb NOT NULL,
	"calibration_batch" boolean DEFAULT false NOT NULL,
	"self_label_batch" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"event" text NOT NULL,
	"subject" text NOT NULL,
	"url" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"delivered_at" timestamp (3) with time zone,
	"failed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "project_ontology_versions" (
	"project_id" text NOT NULL,
	"version" integer NOT NULL,
	"name" text,
	"ontology" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "project_ontology_versions_project_id_version_pk" PRIMARY KEY("project_id","version")
);
--> statement-breakpoint
CREATE TABLE "project_param_versions" (
	"project_id" text NOT NULL,
	"version" integer NOT NULL,
	"params" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "project_param_versions_project_id_version_pk" PRIMARY KEY("project_id","version")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"project_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"rapid" boolean DEFAULT false NOT NULL,
	"studio" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "training_tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"kind" text NOT NULL,
	"type" text NOT NULL,
	"params" jsonb NOT NULL,
	"expected_response" jsonb NOT NULL,
	"initial_response" jsonb,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "batches" ADD CONSTRAINT "batches_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_ontology_versions" ADD CONSTRAINT "project_ontology_versions_project_id_projects_project_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("project_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_param_versions" ADD CONSTRAINT "project_param_versions_project_id_projects_project_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("project_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "training_tasks" ADD CONSTRAINT "training_tasks_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "batches_name" ON "batches" USING btree ("account_id","mode","name");--> statement-breakpoint
CREATE INDEX "batches_list" ON "batches" USING btree ("account_id","mode","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "outbox_due" ON "outbox" USING btree ("next_attempt_at");--> statement-breakpoint
CREATE INDEX "outbox_subject" ON "outbox" USING btree ("account_id","subject");--> statement-breakpoint
CREATE UNIQUE INDEX "projects_name" ON "projects" USING btree ("account_id","mode","name");--> statement-breakpoint
CREATE INDEX "training_tasks_list" ON "training_tasks" USING btree ("account_id","mode","kind","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);