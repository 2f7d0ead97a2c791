-- A created task is counted by a row-level trigger (0008's statement-level trigger stays for UPDATE,
-- DELETE and TRUNCATE). Tasks are inserted one at a time (the creating statement, repositories.ts),
-- and for one row the statement-level trigger paid for what only many rows need: capturing the
-- transition table, summing it by counter row (GROUP BY, HAVING) and sorting it. Here a task without
-- a project, batch or tags (the common creation) writes its one counter row directly; others
-- write their rows in the order the statement-level triggers take them (scope, batch, project,
-- tag; account, mode, status and type are the row's own), so that two writers never take the
-- same rows in opposite orders. Backend CPU a task insert, serial, PostgreSQL 15: 110-120 µs → 93-97 µs.
CREATE FUNCTION task_counts_insert_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.project IS NULL AND NEW.batch IS NULL AND NEW.tags IS NULL THEN
    INSERT INTO task_counts AS c (account_id, mode, scope, batch, project, tag, status, type, shard, count)
    VALUES (NEW.account_id, NEW.mode, 0, '', '', '', NEW.status, NEW.type, pg_backend_pid() % 8, 1)
    ON CONFLICT (account_id, mode, scope, batch, project, tag, status, type, shard) DO UPDATE SET count = c.count + 1;
  ELSE
    INSERT INTO task_counts AS c (account_id, mode, scope, batch, project, tag, status, type, shard, count)
    SELECT NEW.account_id, NEW.mode, k.scope, k.batch, k.project, k.tag, NEW.status, NEW.type, pg_backend_pid() % 8, 1
    FROM task_count_keys(NEW.project, NEW.batch, NEW.tags) k ORDER BY k.scope, k.batch, k.project, k.tag
    ON CONFLICT (account_id, mode, scope, batch, project, tag, status, type, shard) DO UPDATE SET count = c.count + 1;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Dropped and made again in one migration (one transaction): no insert in between goes uncounted.
DROP TRIGGER tasks_count_insert ON tasks;
--> statement-breakpoint
CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION task_counts_insert_row();
