ALTER TABLE "assignments" ADD COLUMN "reviewed_at" timestamp (3) with time zone;--> statement-breakpoint
-- Work decided before this column: by the review that decided it (a review points at the work it decided) ...
UPDATE "assignments" a SET "reviewed_at" = r."submitted_at"
  FROM "assignments" r
  WHERE r."role" = 'review' AND r."parent_assignment_id" = a."assignment_id" AND r."review_result" IS NOT NULL
    AND a."role" <> 'review' AND a."status" IN ('accepted', 'fixed', 'rejected');--> statement-breakpoint
-- ... or by the customer's rejection, which opened its redo.
UPDATE "assignments" a SET "reviewed_at" = (
    SELECT max(e."at") FROM "work_events" e WHERE e."assignment_id" = a."assignment_id" AND e."kind" = 'redo_created')
  WHERE a."reviewed_at" IS NULL AND a."role" <> 'review' AND a."status" = 'rejected';
