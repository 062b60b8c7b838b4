-- tasks/get for one caller and any number of task ids: one row per task of the caller's own
-- (the subject AND the client application that created it, in the caller's perimeter:
-- row-level security) that has not expired; none for an unknown, expired or someone else's
-- task, which read alike. The caller's identity is set by fleet.act_as unless the transaction
-- already acts as them.
--   status: working | completed | cancelled (a task that is still working in its row is judged
--   from its case's events, fleet.task_state, so a step done in this very transaction shows)
--   message: the step in words (for is_error, the refusal's words: the content of the tool
--   error), created_at_ms / updated_at_ms: milliseconds since 1970 (UTC), ttl_ms: its lifetime
--   from creation, poll_ms: the polling interval suggested, is_error and result (completed
--   only: the tool's result by column names once the step is done, shown as that tool's
--   declaration says; the case as it stands with is_error), tool: the tool whose call created it
--   (its scope guards the task, its declaration shows the result).
CREATE OR REPLACE FUNCTION fleet.task_for(p_subject text, p_client text, p_task_ids text[])
RETURNS TABLE (task_id text, status text, message text, created_at_ms bigint,
               updated_at_ms bigint, ttl_ms bigint, poll_ms integer, is_error boolean,
               result json, tool text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    IF fleet.current_subject() IS DISTINCT FROM p_subject
       OR fleet.current_client() IS DISTINCT FROM p_client THEN
        PERFORM fleet.act_as(p_subject, p_client);
    END IF;
    RETURN QUERY
    SELECT r.task_id, r.status, r.message, r.created_at_ms, r.updated_at_ms, r.ttl_ms,
           r.poll_ms, r.is_error, r.result, r.tool
      FROM fleet.task_rows(p_task_ids) r;
END
$$;

REVOKE ALL ON FUNCTION fleet.task_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_for(text, text, text[]) TO fleet_app;
