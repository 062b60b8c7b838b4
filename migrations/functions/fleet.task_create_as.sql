-- A task that follows the step a caller has just asked for on a case (tools/call answered with a
-- CreateTaskResult; the server calls this after the call committed, with an id it generated:
-- unguessable, 22 to 128 characters of A-Z a-z 0-9 _ -):
--   p_kind inspection: the caller's latest inspection_requested event on the case
--   p_kind write_off:  the caller's latest write_off_requested event on the case
-- (the caller: this subject through this client application). The task belongs to them alone.
-- p_tool: the tool that asked (what tasks/get's result is the answer of); p_ttl_ms: its
-- lifetime from now, NULL for the default (7 days), held between 1 s and 30 days. If the step
-- already ended (a technician was quicker), the task is created finished, as it ended. Its
-- polling interval is 5 s: the step waits for a person (minutes, hours), and a finding shows at
-- most that late to a client that polls (at once to one that listens), for 12 reads a minute.
-- Returns the task as fleet.task_for shows it. Raises (SQLSTATE 22023, nothing written) when an
-- argument is not one of the above, the case is not one the caller may see, or the caller did
-- not ask for such a step on it: the server calls it only right after that step.
CREATE OR REPLACE FUNCTION fleet.task_create_as(p_subject text, p_client text, p_task_id text,
                                                p_case_id text, p_kind text, p_tool text,
                                                p_ttl_ms bigint)
RETURNS TABLE (task_id text, status text, message text, created_at_ms bigint,
               updated_at_ms bigint, ttl_ms bigint, poll_ms integer, is_error boolean,
               result json, tool text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
#variable_conflict use_column
DECLARE
    a       fleet.acting;
    c       record;
    s       record;
    v_since bigint;
    v_now   timestamptz := clock_timestamp();
    v_ttl   bigint := least(greatest(coalesce(p_ttl_ms, 604800000), 1000), 2592000000);
BEGIN
    a := fleet.act_as(p_subject, p_client);
    IF NOT coalesce(p_kind = ANY (ARRAY['inspection', 'write_off']), false)
       OR p_task_id IS NULL OR length(p_task_id) NOT BETWEEN 22 AND 128
       OR p_task_id !~ '^[A-Za-z0-9_-]+$' OR coalesce(length(p_tool), 0) NOT BETWEEN 1 AND 128 THEN
        RAISE EXCEPTION 'task_create_as: invalid task id, kind or tool'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT cs.case_id, cs.region, cs.opened_by INTO c FROM cases cs WHERE cs.case_id = p_case_id;
    IF NOT FOUND OR NOT fleet.case_visible(a.role, p_subject, c.case_id, c.opened_by) THEN
        RAISE EXCEPTION 'task_create_as: no case % for this caller', p_case_id
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT e.event_id INTO v_since FROM case_events e
     WHERE e.case_id = p_case_id AND e.actor_subject = p_subject AND e.actor_client = p_client
       AND e.kind = CASE p_kind WHEN 'inspection' THEN 'inspection_requested'
                                ELSE 'write_off_requested' END
     ORDER BY e.event_id DESC
     LIMIT 1;
    IF v_since IS NULL THEN
        RAISE EXCEPTION 'task_create_as: % asked for no % on case %', p_subject, p_kind,
                        p_case_id USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO s FROM fleet.task_state(p_kind, p_case_id, v_since);
    -- Each task created takes up to 100 expired ones away: the table stays bounded by what is
    -- created within a lifetime, with no job of its own.
    PERFORM fleet.task_purge(100);
    INSERT INTO tasks (task_id, subject, client_id, case_id, region, kind, tool, since_event,
                       status, message, is_error, result, created_at, updated_at, ttl_ms,
                       expires_at, poll_ms, cancelled_at)
    VALUES (p_task_id, p_subject, p_client, p_case_id, c.region, p_kind, p_tool, v_since,
            s.status, s.message, s.is_error, s.result, v_now, v_now, v_ttl,
            v_now + v_ttl * interval '1 millisecond', 5000,
            CASE WHEN s.status = 'cancelled' THEN v_now END);
    RETURN QUERY SELECT f.* FROM fleet.task_for(p_subject, p_client, ARRAY[p_task_id]) f;
END
$$;

REVOKE ALL ON FUNCTION fleet.task_create_as(text, text, text, text, text, text, bigint)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_create_as(text, text, text, text, text, text, bigint)
    TO fleet_app;
