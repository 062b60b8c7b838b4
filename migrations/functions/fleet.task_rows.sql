-- The tasks of p_task_ids that have not expired and that the current role sees (row-level
-- security: as the login role, the acting caller's own; as the owner role, any), with their
-- owner: subject, client_id, then the columns of fleet.task_for. A task still working in its
-- row is judged from its case's events (fleet.task_state), so a step done in this very
-- transaction shows. fleet.task_for (as the caller) and fleet.task_notice (as the owner, for
-- the change feed) read tasks through it.
CREATE OR REPLACE FUNCTION fleet.task_rows(p_task_ids text[])
RETURNS TABLE (subject text, client_id text, task_id text, status text, message text,
               created_at_ms bigint, updated_at_ms bigint, ttl_ms bigint, poll_ms integer,
               is_error boolean, result json, tool text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT t.subject, t.client_id, t.task_id, coalesce(s.status, t.status),
           coalesce(s.message, t.message),
           (extract(epoch FROM t.created_at) * 1000)::bigint,
           (extract(epoch FROM greatest(t.updated_at, s.changed_at)) * 1000)::bigint,
           t.ttl_ms, t.poll_ms, coalesce(s.is_error, t.is_error),
           coalesce(s.result, t.result)::json, t.tool
      FROM tasks t
      LEFT JOIN LATERAL (SELECT * FROM fleet.task_state(t.kind, t.case_id, t.since_event)
                          WHERE t.status = 'working') s ON true
     WHERE t.task_id = ANY (p_task_ids) AND t.expires_at > clock_timestamp()
     ORDER BY t.task_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.task_rows(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_rows(text[]) TO fleet_app;
