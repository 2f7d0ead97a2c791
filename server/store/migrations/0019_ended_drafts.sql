-- Drafts of live work (issue 31; the contract's AssignmentDraft).
-- 1. Kept as text: the server never looks into a draft, and as jsonb every heartbeat made the
--    database parse up to a megabyte of JSON and every read print it again (on the embedded
--    database, on the server's own thread). jsonb's text is the same JSON.
-- 2. Kept only while they can be used: the active assignment's, and, of the assignments a worker
--    released or let lapse, only the last one's, while its task is open. Before, every ended
--    assignment kept its draft for good. Data repair: drop the drafts that rule no longer keeps
--    (submitted, skipped, reviewed, canceled; those of tasks that completed or were canceled; all
--    but each worker's last released or lapsed one).
-- 3. The partial index by which a release or a lapse finds the worker's other kept drafts.
ALTER TABLE "assignments" ALTER COLUMN "draft" SET DATA TYPE text USING "draft"::text;--> statement-breakpoint
UPDATE "assignments" SET "draft" = NULL WHERE "draft" IS NOT NULL AND "status" NOT IN ('active', 'expired', 'released');--> statement-breakpoint
UPDATE "assignments" a SET "draft" = NULL WHERE a."draft" IS NOT NULL AND a."status" IN ('expired', 'released') AND (
  EXISTS (SELECT 1 FROM "task_work" tw WHERE tw."task_id" = a."task_id" AND tw."stage" IN ('done', 'canceled'))
  OR EXISTS (SELECT 1 FROM "assignments" b WHERE b."worker_id" = a."worker_id" AND b."status" IN ('expired', 'released')
    AND b."draft" IS NOT NULL AND (coalesce(b."ended_at", b."issued_at"), b."assignment_id") > (coalesce(a."ended_at", a."issued_at"), a."assignment_id")));--> statement-breakpoint
CREATE INDEX "assignments_ended_drafts" ON "assignments" USING btree ("worker_id") WHERE "assignments"."draft" is not null and "assignments"."status" <> 'active';
