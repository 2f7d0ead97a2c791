ALTER TABLE "batches" ALTER COLUMN "metadata" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "outbox" ALTER COLUMN "payload" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "project_param_versions" ALTER COLUMN "params" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "tasks" ALTER COLUMN "params" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "tasks" ALTER COLUMN "metadata" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "training_tasks" ALTER COLUMN "params" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "audited_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "archived" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- ==== Hand-written (not generated from schema.ts): batches.audited_at kept by a trigger, and the repair of training tasks ====
-- A batch's audited_at (see batches.auditedAt in schema.ts): the latest audited_at among the audit
-- records of its tasks. A row trigger on tasks whose WHEN condition holds only when a batch task's
-- audits change, so the many other updates of a task call no function; whoever adds an audit (the
-- customer's audit, a review) moves the batch's time in the same transaction. The same SQL runs on
-- PostgreSQL 15 and PGlite (PostgreSQL 18).
CREATE FUNCTION batch_audited_at() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  latest timestamptz := (SELECT max((a ->> 'audited_at')::timestamptz) FROM jsonb_array_elements(
    CASE WHEN jsonb_typeof(NEW.audits) = 'array' THEN NEW.audits END) a);
BEGIN
  IF latest IS NOT NULL THEN
    UPDATE batches SET audited_at = greatest(coalesce(audited_at, latest), latest)
    WHERE account_id = NEW.account_id AND mode = NEW.mode AND name = NEW.batch;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER tasks_batch_audited AFTER UPDATE ON tasks FOR EACH ROW
WHEN (NEW.batch IS NOT NULL AND OLD.audits IS DISTINCT FROM NEW.audits)
EXECUTE FUNCTION batch_audited_at();
--> statement-breakpoint
-- The batches audited before, after the trigger exists (CREATE TRIGGER holds off writers of tasks
-- until this migration commits, so no audit is missed).
UPDATE batches b SET audited_at = a.latest
FROM (SELECT t.account_id, t.mode, t.batch, max((e ->> 'audited_at')::timestamptz) AS latest
      FROM tasks t CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(t.audits) = 'array' THEN t.audits END) e
      WHERE t.batch IS NOT NULL GROUP BY t.account_id, t.mode, t.batch) a
WHERE b.account_id = a.account_id AND b.mode = a.mode AND b.name = a.batch;
--> statement-breakpoint
-- Training and evaluation creations took a numeric string (`"min_width": "99999999"`,
-- `"increment_seconds": "0.5"`) past the contract's bounds: it was typed after validation, so the
-- bound never saw a number. Such a task was stored (its creation answered 500, or 200 with
-- response validation off), and every later list of the account's training tasks answered 500.
-- Each number at such a place is brought to the nearest value the contract allows (the bounds of
-- the parameters that take numeric strings, by their key and, for a date's parts, the key above);
-- a `step` that is not above 0 is removed (its default, 1, applies). Clamping keeps every
-- `min_* <= max_*` that the creation checked. Nothing else changes, and rows within bounds are left
-- as they are.
CREATE FUNCTION humantask_repair_bounds(value jsonb, parent text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF jsonb_typeof(value) = 'array' THEN
    RETURN (SELECT coalesce(jsonb_agg(
      CASE WHEN parent IN ('default_seconds', 'defaults_seconds') AND jsonb_typeof(x) = 'number'
        THEN to_jsonb(least(greatest(x::numeric, 0), 86400)) ELSE humantask_repair_bounds(x, NULL) END ORDER BY i), '[]'::jsonb)
      FROM jsonb_array_elements(value) WITH ORDINALITY AS a(x, i));
  END IF;
  IF jsonb_typeof(value) <> 'object' THEN
    RETURN value;
  END IF;
  RETURN (SELECT coalesce(jsonb_object_agg(e.k,
      CASE WHEN jsonb_typeof(e.v) = 'number' AND b.lo IS NOT NULL THEN to_jsonb(least(greatest(e.v::numeric, b.lo), b.hi))
        ELSE humantask_repair_bounds(e.v, e.k) END), '{}'::jsonb)
    FROM jsonb_each(value) AS e(k, v)
    LEFT JOIN (VALUES
      ('min_width', NULL, 0, 65535), ('min_height', NULL, 0, 65535),
      ('min_vertices', NULL, 1, 1000), ('max_vertices', NULL, 1, 1000),
      ('frame_rate', NULL, 1, 60), ('num_items_to_rank', NULL, 1, 100),
      ('min_responses_required', NULL, 1, 100), ('max_responses_required', NULL, 1, 100),
      ('max_characters', NULL, 1, 100000), ('min_choices', NULL, 1, 1000), ('max_choices', NULL, 1, 1000),
      ('increment_seconds', NULL, 1, 3600),
      ('year', 'defaults', 1, 9999), ('month', 'defaults', 1, 12), ('day', 'defaults', 1, 31),
      ('hour', 'defaults', 0, 23), ('minute', 'defaults', 0, 59)
    ) AS b(key, under, lo, hi) ON b.key = e.k AND (b.under IS NULL OR b.under = parent)
    WHERE NOT (e.k = 'step' AND jsonb_typeof(e.v) = 'number' AND e.v::numeric <= 0));
END $$;
--> statement-breakpoint
UPDATE training_tasks SET params = humantask_repair_bounds(params::jsonb, NULL)::json
WHERE humantask_repair_bounds(params::jsonb, NULL) <> params::jsonb;
--> statement-breakpoint
DROP FUNCTION humantask_repair_bounds(jsonb, text);
-- ==== end of the hand-written block ====
