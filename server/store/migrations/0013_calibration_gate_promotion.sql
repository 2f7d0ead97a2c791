ALTER TABLE "batches" ADD COLUMN "calibration_score" double precision;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "calibration_reviewed" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "training_tasks" ADD COLUMN "source_task_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "training_tasks_source" ON "training_tasks" USING btree ("source_task_id","kind") WHERE "training_tasks"."source_task_id" is not null;