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
--   only: the structuredContent the tool call returns once the step is done; the case as it
--   stands with is_error).
CREATE OR REPLACE FUNCTION fleet.task_for(p_subject text, p_client text, p_task_ids text[])
RETURNS TABLE (task_id text, status text, message text, created_at_ms bigint,
               updated_at_ms bigint, ttl_ms bigint, poll_ms integer, is_error boolean,
               result json)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
BEGIN
    IF fleet.current_subject() IS DISTINCT FROM p_subject
       OR fleet.current_client() IS DISTINCT FROM p_client THEN
        PERFORM fleet.act_as(p_subject, p_client);
    END IF;
    RETURN QUERY
    SELECT t.task_id, coalesce(s.status, t.status), coalesce(s.message, t.message),
           (extract(epoch FROM t.created_at) * 1000)::bigint,
           (extract(epoch FROM greatest(t.updated_at, s.changed_at)) * 1000)::bigint,
           t.ttl_ms, t.poll_ms, coalesce(s.is_error, t.is_error),
           coalesce(s.result, t.result)::json
      FROM fleet.tasks t
      LEFT JOIN LATERAL (SELECT * FROM fleet.task_state(t.kind, t.case_id, t.since_event)
                          WHERE t.status = 'working') s ON true
     WHERE t.task_id = ANY (p_task_ids) AND t.expires_at > clock_timestamp()
     ORDER BY t.task_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.task_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_for(text, text, text[]) TO fleet_app;
