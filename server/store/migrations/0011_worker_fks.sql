-- Every column naming a worker references workers (issue 18). No ON DELETE action: workers are
-- never deleted (removal sets status 'removed'), so the history of a removed worker keeps pointing
-- at its record, and a hard delete of a worker with history is refused. Only the work loop writes
-- these columns, always for an existing worker, so existing rows satisfy the constraints.
ALTER TABLE "assignments" ADD CONSTRAINT "assignments_worker_id_workers_worker_id_fk" FOREIGN KEY ("worker_id") REFERENCES "public"."workers"("worker_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_work" ADD CONSTRAINT "task_work_reserved_for_workers_worker_id_fk" FOREIGN KEY ("reserved_for") REFERENCES "public"."workers"("worker_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "work_events" ADD CONSTRAINT "work_events_worker_id_workers_worker_id_fk" FOREIGN KEY ("worker_id") REFERENCES "public"."workers"("worker_id") ON DELETE no action ON UPDATE no action;