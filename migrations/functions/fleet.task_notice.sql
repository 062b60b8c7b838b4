-- One task whoever owns it, for the change feed (NOTIFY bikaroo_changes 'task:<task_id>', sent
-- by fleet.tasks_follow_case): the server reads it to tell its owner's listens, and only theirs.
-- Returns the owner (subject, client_id) and the columns of fleet.task_for: task_id, status,
-- message, created_at_ms, updated_at_ms, ttl_ms, poll_ms, is_error, result, tool; no row for a task
-- that is gone or expired (fleet.task_rows). SECURITY DEFINER, owned by the owner role with a
-- fixed search_path: row-level security keeps a task from everyone but its owner, and the feed
-- acts as nobody.
CREATE OR REPLACE FUNCTION fleet.task_notice(p_task_id text)
RETURNS TABLE (subject text, client_id text, task_id text, status text, message text,
               created_at_ms bigint, updated_at_ms bigint, ttl_ms bigint, poll_ms integer,
               is_error boolean, result json, tool text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM fleet.task_rows(ARRAY[p_task_id]);
END
$$;

REVOKE ALL ON FUNCTION fleet.task_notice(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_notice(text) TO fleet_app;
