ALTER TABLE "assignments" ADD COLUMN "stands_for" text;--> statement-breakpoint
CREATE INDEX "assignments_stand_in" ON "assignments" USING btree ("stands_for","worker_id") WHERE "assignments"."stands_for" is not null;--> statement-breakpoint
CREATE INDEX "assignments_stand_in_worker" ON "assignments" USING btree ("worker_id","issued_at") WHERE "assignments"."stands_for" is not null;