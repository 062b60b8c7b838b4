-- Where a task of kind p_kind stands, from its case's events after p_since (the event that asked
-- for the step the task waits on): the first event that ends the step decides.
--   inspection: inspected -> completed; inspection_cancelled -> cancelled
--   write_off:  write_off_approved -> completed; write_off_refused -> completed with is_error
--               (a tool error: the refusal's words are the message); write_off_withdrawn ->
--               cancelled
--   none yet:   working, the message naming the step it waits on.
-- result (completed only): the case as the workflow's tools return it (fleet.case_step_view, by
-- column names: the server shows it as the tool's declaration does), i.e. what the call returns
-- once the step is done; changed_at: when the step ended (NULL while working). message: the
-- step in words, at most 2000 characters. Reads as the caller (row-level security):
-- fleet.task_open and fleet.task_for for the task's owner, the trigger fleet.tasks_follow_case
-- as the owner role.
CREATE OR REPLACE FUNCTION fleet.task_state(p_kind text, p_case_id text, p_since bigint)
RETURNS TABLE (status text, message text, is_error boolean, result jsonb, changed_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    ev    record;
    v     jsonb := fleet.case_step_view(p_case_id);
    v_who text;
BEGIN
    is_error := false;
    SELECT e.kind, e.at, e.note, e.actor_subject INTO ev FROM case_events e
     WHERE e.case_id = p_case_id AND e.event_id > p_since
       AND e.kind = ANY (CASE p_kind
                             WHEN 'inspection' THEN ARRAY['inspected', 'inspection_cancelled']
                             ELSE ARRAY['write_off_approved', 'write_off_refused',
                                        'write_off_withdrawn'] END)
     ORDER BY e.event_id
     LIMIT 1;
    IF v IS NULL THEN
        RETURN; -- the case is not visible to the caller: no state to tell
    END IF;
    IF ev.kind IS NULL THEN
        status := 'working';
        message := CASE p_kind
            WHEN 'inspection' THEN
                format('Inspection of bike %s requested (case %s); waiting for a technician.',
                       v ->> 'bike_id', p_case_id)
            ELSE
                format('Write-off of bike %s requested (case %s); waiting for the approval '
                       'of another fleet operator.', v ->> 'bike_id', p_case_id) END;
        RETURN NEXT;
        RETURN;
    END IF;
    changed_at := ev.at;
    SELECT left(n.name, 63) INTO v_who FROM fleet.case_names(p_case_id) n
     WHERE n.kind = 'subject' AND n.id = ev.actor_subject;
    v_who := coalesce(v_who, ev.actor_subject);
    IF ev.kind IN ('inspection_cancelled', 'write_off_withdrawn') THEN
        status := 'cancelled';
        message := format('%s request withdrawn by %s; case %s is back at step %s.',
                          CASE p_kind WHEN 'inspection' THEN 'Inspection' ELSE 'Write-off' END,
                          v_who, p_case_id,
                          CASE p_kind WHEN 'inspection' THEN 'open' ELSE 'inspected' END);
        RETURN NEXT;
        RETURN;
    END IF;
    status := 'completed';
    result := v;
    is_error := ev.kind = 'write_off_refused';
    message := left(CASE ev.kind
        WHEN 'inspected' THEN
            format('Bike %s inspected by %s (case %s): %s.', v ->> 'bike_id', v_who, p_case_id,
                   replace(v ->> 'finding', '_', ' '))
        WHEN 'write_off_approved' THEN
            format('Write-off of bike %s approved by %s: case %s is closed and the bike retired.',
                   v ->> 'bike_id', v_who, p_case_id)
        ELSE
            format('The write-off of bike %s was refused by %s%s. Case %s is back at step '
                   'inspected, and the bike stays %s: close it with another resolution, or '
                   'ask again.', v ->> 'bike_id', v_who,
                   CASE WHEN ev.note IS NOT NULL THEN ': "' || ev.note || '"' ELSE '' END,
                   p_case_id, v ->> 'bike_status') END, 2000);
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION fleet.task_state(text, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_state(text, text, bigint) TO fleet_app;
