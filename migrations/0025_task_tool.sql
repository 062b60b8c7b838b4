-- 0025: the task functions return the tool whose call created each task (column tool), so that
-- the server can ask for that tool's scope on every task method and listen: reading a task is
-- reading that tool's result, cancelling it undoes that tool's write. A result type changes, so
-- the old signatures go here and their files (functions/fleet.task_*.sql) create them anew in
-- the same migrate (migrations/README.md, "Changing a function").
DROP FUNCTION IF EXISTS fleet.task_create_as(text, text, text, text, text, text, bigint);
DROP FUNCTION IF EXISTS fleet.task_cancel_as(text, text, text);
DROP FUNCTION IF EXISTS fleet.task_notice(text);
DROP FUNCTION IF EXISTS fleet.task_for(text, text, text[]);
DROP FUNCTION IF EXISTS fleet.task_rows(text[]);
-- Applied again below whatever their checksums say: each is created anew.
DELETE FROM fleet_meta.schema_functions
 WHERE name IN ('fleet.task_create_as.sql', 'fleet.task_cancel_as.sql', 'fleet.task_notice.sql',
                'fleet.task_for.sql', 'fleet.task_rows.sql');

-- A task suggests a poll every 5 s (fleet.task_create_as says why); the tasks made before with
-- 30 s, still waiting for a person, suggest it from now on too.
UPDATE fleet.tasks SET poll_ms = 5000 WHERE poll_ms = 30000;
