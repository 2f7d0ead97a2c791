-- Training, hidden evaluation and pausing (issue 19). assignments.task_id no longer references tasks:
-- a training assignment names its training task, a hidden evaluation the id it is shown under (a
-- live task's id shape). Tasks are never deleted, so the dropped ON DELETE CASCADE never ran. Live
-- attempts keep one per task and worker; training tries may repeat a training task.
CREATE TABLE "worker_qualifications" (
	"worker_id" text NOT NULL,
	"account_id" text NOT NULL,
	"project" text NOT NULL,
	"state" text NOT NULL,
	"tries" integer DEFAULT 0 NOT NULL,
	"try_started_at" timestamp (3) with time zone,
	"retry_after" timestamp (3) with time zone,
	"training_score" double precision,
	"last_good_at" timestamp (3) with time zone,
	"paused_accuracy" double precision,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "worker_qualifications_worker_id_account_id_project_pk" PRIMARY KEY("worker_id","account_id","project")
);
--> statement-breakpoint
ALTER TABLE "assignments" DROP CONSTRAINT "assignments_task_id_tasks_task_id_fk";
--> statement-breakpoint
DROP INDEX "assignments_one_attempt";--> statement-breakpoint
ALTER TABLE "assignments" ADD COLUMN "purpose" text DEFAULT 'live' NOT NULL;--> statement-breakpoint
ALTER TABLE "assignments" ADD COLUMN "quality_task_id" text;--> statement-breakpoint
ALTER TABLE "assignments" ADD COLUMN "quality_project" text;--> statement-breakpoint
ALTER TABLE "assignments" ADD COLUMN "quality_batch" text;--> statement-breakpoint
ALTER TABLE "assignments" ADD COLUMN "score" double precision;--> statement-breakpoint
ALTER TABLE "assignments" ADD COLUMN "training_feedback" jsonb;--> statement-breakpoint
ALTER TABLE "worker_qualifications" ADD CONSTRAINT "worker_qualifications_worker_id_workers_worker_id_fk" FOREIGN KEY ("worker_id") REFERENCES "public"."workers"("worker_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "worker_qualifications" ADD CONSTRAINT "worker_qualifications_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "assignments_scores" ON "assignments" USING btree ("worker_id","account_id","quality_project","purpose","submitted_at" DESC NULLS LAST) WHERE "assignments"."purpose" <> 'live';--> statement-breakpoint
CREATE UNIQUE INDEX "assignments_one_attempt" ON "assignments" USING btree ("task_id","worker_id") WHERE "assignments"."role" = 'attempt' and "assignments"."status" not in ('expired', 'released') and "assignments"."purpose" = 'live';