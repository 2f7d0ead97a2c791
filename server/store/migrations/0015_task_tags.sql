CREATE TABLE "task_tags" (
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"tag" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"task_id" text NOT NULL
);
--> statement-breakpoint
DROP INDEX "tasks_tags";--> statement-breakpoint
DROP INDEX "tasks_customer_review_status";--> statement-breakpoint
CREATE UNIQUE INDEX "task_tags_list" ON "task_tags" USING btree ("account_id","mode","tag","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "tasks_customer_review_status" ON "tasks" USING btree ("account_id","mode","customer_review_status","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST) WHERE "tasks"."customer_review_status" is not null;--> statement-breakpoint
-- ==== Hand-written (not generated from schema.ts): the triggers that keep task_tags, and its backfill ====
-- A task's rows in task_tags (see taskTags in schema.ts): one per distinct tag, with the task's
-- account, mode, created_at and id (the order of a task list). Row triggers with a WHEN condition:
-- a statement that leaves tags (and the columns copied with them) alone calls no function at all,
-- so untagged creations and the many updates of a task's other columns pay nothing. The same SQL
-- runs on PostgreSQL 15 and PGlite (PostgreSQL 18).
CREATE FUNCTION task_tags_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM task_tags;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM task_tags
    WHERE account_id = OLD.account_id AND mode = OLD.mode AND created_at = OLD.created_at AND task_id = OLD.task_id
      AND tag IN (SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(OLD.tags) = 'array' THEN OLD.tags END));
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO task_tags (account_id, mode, tag, created_at, task_id)
    SELECT DISTINCT NEW.account_id, NEW.mode, t, NEW.created_at, NEW.task_id
    FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(NEW.tags) = 'array' THEN NEW.tags END) t;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER tasks_tags_insert AFTER INSERT ON tasks FOR EACH ROW WHEN (NEW.tags IS NOT NULL) EXECUTE FUNCTION task_tags_change();
--> statement-breakpoint
CREATE TRIGGER tasks_tags_update AFTER UPDATE ON tasks FOR EACH ROW
WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.task_id IS DISTINCT FROM NEW.task_id
  OR OLD.account_id IS DISTINCT FROM NEW.account_id OR OLD.mode IS DISTINCT FROM NEW.mode)
EXECUTE FUNCTION task_tags_change();
--> statement-breakpoint
CREATE TRIGGER tasks_tags_delete AFTER DELETE ON tasks FOR EACH ROW WHEN (OLD.tags IS NOT NULL) EXECUTE FUNCTION task_tags_change();
--> statement-breakpoint
CREATE TRIGGER tasks_tags_truncate AFTER TRUNCATE ON tasks FOR EACH STATEMENT EXECUTE FUNCTION task_tags_change();
--> statement-breakpoint
-- The tasks stored before, after the triggers exist (CREATE TRIGGER holds off writers of tasks
-- until this migration commits, so none is missed or written twice).
INSERT INTO task_tags (account_id, mode, tag, created_at, task_id)
SELECT DISTINCT t.account_id, t.mode, g.tag, t.created_at, t.task_id
FROM tasks t CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(t.tags) = 'array' THEN t.tags END) AS g(tag)
WHERE t.tags IS NOT NULL;
-- ==== end of the hand-written block ====
