CREATE TABLE "assignments" (
	"assignment_id" text PRIMARY KEY NOT NULL,
	"task_id" text NOT NULL,
	"account_id" text NOT NULL,
	"worker_id" text NOT NULL,
	"role" text NOT NULL,
	"status" text NOT NULL,
	"lease_token" text NOT NULL,
	"issued_at" timestamp (3) with time zone NOT NULL,
	"lease_expires_at" timestamp (3) with time zone NOT NULL,
	"hard_deadline" timestamp (3) with time zone NOT NULL,
	"heartbeat_at" timestamp (3) with time zone,
	"submitted_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	"active_ms" bigint DEFAULT 0 NOT NULL,
	"draft" jsonb,
	"response" jsonb,
	"parent_assignment_id" text,
	"review_result" text,
	"feedback" jsonb,
	"skip_reason" text
);
--> statement-breakpoint
CREATE TABLE "staffing" (
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"project" text NOT NULL,
	"batch" text DEFAULT '' NOT NULL,
	"attempt_subjects" text[],
	"review_subjects" text[],
	"review_first" integer DEFAULT 0 NOT NULL,
	"review_rate" double precision DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "staffing_account_id_mode_project_batch_pk" PRIMARY KEY("account_id","mode","project","batch")
);
--> statement-breakpoint
CREATE TABLE "task_work" (
	"task_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"project" text,
	"batch" text,
	"stage" text NOT NULL,
	"needed" integer DEFAULT 1 NOT NULL,
	"open_slots" integer NOT NULL,
	"priority" integer NOT NULL,
	"available_at" timestamp (3) with time zone NOT NULL,
	"calibration" boolean DEFAULT false NOT NULL,
	"reserved_for" text,
	"reserved_until" timestamp (3) with time zone,
	"parent_assignment_id" text,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "work_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "work_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp (3) with time zone NOT NULL,
	"account_id" text NOT NULL,
	"worker_id" text,
	"assignment_id" text,
	"task_id" text,
	"kind" text NOT NULL,
	"data" jsonb
);
--> statement-breakpoint
ALTER TABLE "assignments" ADD CONSTRAINT "assignments_task_id_tasks_task_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("task_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assignments" ADD CONSTRAINT "assignments_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "staffing" ADD CONSTRAINT "staffing_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_work" ADD CONSTRAINT "task_work_task_id_tasks_task_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("task_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_work" ADD CONSTRAINT "task_work_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "assignments_one_attempt" ON "assignments" USING btree ("task_id","worker_id") WHERE "assignments"."role" = 'attempt' and "assignments"."status" not in ('expired', 'released');--> statement-breakpoint
CREATE UNIQUE INDEX "assignments_one_active" ON "assignments" USING btree ("worker_id") WHERE "assignments"."status" = 'active';--> statement-breakpoint
CREATE INDEX "assignments_task" ON "assignments" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "assignments_worker" ON "assignments" USING btree ("worker_id","issued_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "assignments_lease" ON "assignments" USING btree ("lease_expires_at") WHERE "assignments"."status" = 'active';--> statement-breakpoint
CREATE INDEX "task_work_claim" ON "task_work" USING btree ("priority" DESC NULLS LAST,"created_at","task_id") WHERE "task_work"."stage" in ('attempt', 'review') and "task_work"."open_slots" > 0;--> statement-breakpoint
CREATE INDEX "task_work_claim_account" ON "task_work" USING btree ("account_id","priority" DESC NULLS LAST,"created_at","task_id") WHERE "task_work"."stage" in ('attempt', 'review') and "task_work"."open_slots" > 0;--> statement-breakpoint
CREATE INDEX "task_work_reserved" ON "task_work" USING btree ("reserved_for") WHERE "task_work"."reserved_for" is not null and "task_work"."open_slots" > 0;--> statement-breakpoint
CREATE INDEX "work_events_task" ON "work_events" USING btree ("task_id","at");--> statement-breakpoint
CREATE INDEX "work_events_worker" ON "work_events" USING btree ("worker_id","at");--> statement-breakpoint
-- Live tasks already waiting get their work row (hand-written; keep when regenerating).
INSERT INTO "task_work" ("task_id", "account_id", "project", "batch", "stage", "needed", "open_slots", "priority", "available_at", "calibration", "created_at")
SELECT t."task_id", t."account_id", t."project", t."batch", 'attempt', 1, 1,
  CASE WHEN t."generation" = 'legacy' AND t."urgency" = 'immediate' THEN 3 WHEN t."generation" = 'legacy' AND t."urgency" = 'week' THEN 1 ELSE 2 END,
  t."created_at",
  coalesce((SELECT b."calibration_batch" FROM "batches" b WHERE b."account_id" = t."account_id" AND b."mode" = 'live' AND b."name" = t."batch"), false),
  t."created_at"
FROM "tasks" t WHERE t."mode" = 'live' AND t."status" = 'pending'
ON CONFLICT DO NOTHING;
