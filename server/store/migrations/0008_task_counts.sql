CREATE TABLE "task_counts" (
	"account_id" text NOT NULL,
	"mode" text NOT NULL,
	"scope" smallint NOT NULL,
	"batch" text NOT NULL,
	"project" text NOT NULL,
	"tag" text NOT NULL,
	"status" text NOT NULL,
	"type" text NOT NULL,
	"shard" smallint NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "task_counts_account_id_mode_scope_batch_project_tag_status_type_shard_pk" PRIMARY KEY("account_id","mode","scope","batch","project","tag","status","type","shard")
);
--> statement-breakpoint
CREATE INDEX "tasks_list_project" ON "tasks" USING btree ("account_id","mode","project","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST) WHERE "tasks"."project" is not null;--> statement-breakpoint
CREATE INDEX "tasks_list_batch" ON "tasks" USING btree ("account_id","mode","batch","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST) WHERE "tasks"."batch" is not null;--> statement-breakpoint
CREATE INDEX "tasks_completed_at" ON "tasks" USING btree ("account_id","mode","completed_at") WHERE "tasks"."completed_at" is not null;--> statement-breakpoint
CREATE INDEX "tasks_updated_at" ON "tasks" USING btree ("account_id","mode","updated_at");--> statement-breakpoint
CREATE INDEX "tasks_customer_review_status" ON "tasks" USING btree ("account_id","mode","customer_review_status") WHERE "tasks"."customer_review_status" is not null;--> statement-breakpoint
CREATE INDEX "tasks_tags" ON "tasks" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
-- ==== Hand-written (not generated from schema.ts): the triggers that keep task_counts, and its backfill ====
-- The counter rows a task counts in (see taskCounts in schema.ts): every task in scope 0, in scope 1
-- with a project, in scope 2 with a batch, in scope 3 once per tag.
CREATE FUNCTION task_count_keys(text, text, jsonb) RETURNS TABLE (scope smallint, batch text, project text, tag text)
LANGUAGE sql IMMUTABLE AS $$
  SELECT 0::smallint, '', '', ''
  UNION ALL SELECT 1::smallint, '', $1, '' WHERE $1 IS NOT NULL
  UNION ALL SELECT 2::smallint, $2, coalesce($1, ''), '' WHERE $2 IS NOT NULL
  UNION ALL SELECT DISTINCT 3::smallint, '', '', t FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof($3) = 'array' THEN $3 END) t
$$;
--> statement-breakpoint
-- Statement-level triggers: each sums the changed rows (+1 per new row, -1 per old row; an update
-- that leaves the counted columns alone cancels out) by counter row and adds the sums to the shard
-- of the writing connection, in key order (two writers never take the same rows in opposite
-- orders). The same SQL runs on PostgreSQL 15 and PGlite (PostgreSQL 18).
CREATE FUNCTION task_counts_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO task_counts AS c (account_id, mode, scope, batch, project, tag, status, type, shard, count)
    SELECT ch.account_id, ch.mode, k.scope, k.batch, k.project, k.tag, ch.status, ch.type, pg_backend_pid() % 8, sum(ch.delta)
    FROM (SELECT account_id, mode, project, batch, tags, status, type, 1 AS delta FROM new_rows) ch CROSS JOIN LATERAL task_count_keys(ch.project, ch.batch, ch.tags) k
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING sum(ch.delta) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
    ON CONFLICT (account_id, mode, scope, batch, project, tag, status, type, shard) DO UPDATE SET count = c.count + excluded.count;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO task_counts AS c (account_id, mode, scope, batch, project, tag, status, type, shard, count)
    SELECT ch.account_id, ch.mode, k.scope, k.batch, k.project, k.tag, ch.status, ch.type, pg_backend_pid() % 8, sum(ch.delta)
    FROM (SELECT account_id, mode, project, batch, tags, status, type, -1 AS delta FROM old_rows) ch CROSS JOIN LATERAL task_count_keys(ch.project, ch.batch, ch.tags) k
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING sum(ch.delta) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
    ON CONFLICT (account_id, mode, scope, batch, project, tag, status, type, shard) DO UPDATE SET count = c.count + excluded.count;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO task_counts AS c (account_id, mode, scope, batch, project, tag, status, type, shard, count)
    SELECT ch.account_id, ch.mode, k.scope, k.batch, k.project, k.tag, ch.status, ch.type, pg_backend_pid() % 8, sum(ch.delta)
    FROM (SELECT account_id, mode, project, batch, tags, status, type, -1 AS delta FROM old_rows UNION ALL SELECT account_id, mode, project, batch, tags, status, type, 1 FROM new_rows) ch CROSS JOIN LATERAL task_count_keys(ch.project, ch.batch, ch.tags) k
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING sum(ch.delta) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
    ON CONFLICT (account_id, mode, scope, batch, project, tag, status, type, shard) DO UPDATE SET count = c.count + excluded.count;
  ELSE -- TRUNCATE
    DELETE FROM task_counts;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION task_counts_change();
--> statement-breakpoint
CREATE TRIGGER tasks_count_update AFTER UPDATE ON tasks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION task_counts_change();
--> statement-breakpoint
CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION task_counts_change();
--> statement-breakpoint
CREATE TRIGGER tasks_count_truncate AFTER TRUNCATE ON tasks FOR EACH STATEMENT EXECUTE FUNCTION task_counts_change();
--> statement-breakpoint
-- The tasks stored before: counted after the triggers exist (CREATE TRIGGER holds off writers of
-- tasks until this migration commits, so none is missed or counted twice).
INSERT INTO task_counts (account_id, mode, scope, batch, project, tag, status, type, shard, count)
SELECT t.account_id, t.mode, k.scope, k.batch, k.project, k.tag, t.status, t.type, 0, count(*)
FROM tasks t CROSS JOIN LATERAL task_count_keys(t.project, t.batch, t.tags) k
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
-- ==== end of the hand-written block ====
