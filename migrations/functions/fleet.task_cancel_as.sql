-- tasks/cancel for one caller: cooperative. A task of the caller's own that still waits withdraws
-- the step it waits on, in this transaction, as the caller with the write right of the tool that
-- asked for it (request_inspection or close_case, fleet.write_begin, as a call of tasks/cancel):
--   inspection: the case back to open, an inspection_cancelled event
--   write_off:  the case back to inspected (the request cleared), a write_off_withdrawn event
-- and one audit row (tool 'tasks/cancel', target the case, the digest of the task id). A task
-- that has ended stays as it ended; one whose caller may no longer withdraw it goes on waiting
-- (audited as denied). Lock order as the steps': the bike row, then the case row.
-- Returns the task as fleet.task_for shows it afterwards; no row for an unknown, expired or
-- someone else's task (nothing is written then).
CREATE OR REPLACE FUNCTION fleet.task_cancel_as(p_subject text, p_client text, p_task_id text)
RETURNS TABLE (task_id text, status text, message text, created_at_ms bigint,
               updated_at_ms bigint, ttl_ms bigint, poll_ms integer, is_error boolean,
               result json, tool text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    t        record;
    c        record;
    s        record;
    w        fleet.write_state;
    v_digest text := encode(sha256(convert_to(coalesce(p_task_id, ''), 'UTF8')), 'hex');
    v_back   text;
    v_now    timestamptz;
BEGIN
    PERFORM fleet.act_as(p_subject, p_client);
    SELECT tk.kind, tk.case_id, tk.since_event, tk.status INTO t FROM tasks tk
     WHERE tk.task_id = p_task_id AND tk.expires_at > clock_timestamp();
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF t.status = 'working' THEN
        w := fleet.write_begin(CASE t.kind WHEN 'inspection' THEN 'request_inspection'
                                           ELSE 'close_case' END,
                               (p_subject, p_client, '{}', 'tasks/cancel', NULL, v_digest, NULL,
                                true, t.case_id, NULL, NULL, NULL)::fleet.write_call);
        SELECT cs.bike_id INTO c FROM cases cs WHERE cs.case_id = t.case_id;
        PERFORM 1 FROM bikes b WHERE b.bike_id = c.bike_id FOR UPDATE;
        SELECT cs.region, cs.state INTO c FROM cases cs WHERE cs.case_id = t.case_id FOR UPDATE;
        SELECT * INTO s FROM fleet.task_state(t.kind, t.case_id, t.since_event);
        v_back := CASE t.kind WHEN 'inspection' THEN 'open' ELSE 'inspected' END;
        IF (w.answer).outcome IS NOT NULL THEN
            NULL; -- the write right is gone (fleet.write_begin audited it)
        ELSIF c.state IS NULL THEN
            -- The policies hid the case from FOR UPDATE: out of the perimeter now.
            PERFORM fleet.write_stop(w, 'forbidden');
        ELSIF s.status = 'working'
              AND c.state = (CASE t.kind WHEN 'inspection' THEN 'inspection_requested'
                                         ELSE 'awaiting_approval' END) THEN
            v_now := clock_timestamp();
            UPDATE cases cs
               SET state = v_back, updated_at = v_now,
                   write_off_requested_by = NULL, write_off_requested_via = NULL,
                   write_off_requested_at = NULL
             WHERE cs.case_id = t.case_id;
            INSERT INTO case_events (case_id, region, kind, actor_subject, actor_client, at,
                                     note)
            VALUES (t.case_id, c.region,
                    CASE t.kind WHEN 'inspection' THEN 'inspection_cancelled'
                                ELSE 'write_off_withdrawn' END,
                    p_subject, p_client, v_now, 'withdrawn by its requester (tasks/cancel)');
            PERFORM fleet.write_done(w, c.region, NULL, t.kind || ' request withdrawn');
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM fleet.task_for(p_subject, p_client, ARRAY[p_task_id]);
END
$$;

REVOKE ALL ON FUNCTION fleet.task_cancel_as(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_cancel_as(text, text, text) TO fleet_app;
