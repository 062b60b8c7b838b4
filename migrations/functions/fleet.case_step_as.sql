-- The investigation case's workflow, one step per call, a write (migrations/README.md, "A write
-- function") that serves the tools of server/capabilities/case_workflow.json: c.tool says which
-- step (fleet.case_steps, the state machine), and it is the capability whose rights, people-only
-- rule and confirmation policy apply (fleet.capabilities' row of that name):
--   request_inspection {caseId, note?}             open -> inspection_requested
--   record_inspection  {caseId, finding, note?}    inspection_requested -> inspected
--   close_case         {caseId, resolution, note?} inspected -> closed (repaired, no_fault_found:
--                      the bike back to available when it is held unavailable and no other case
--                      of it is active) or -> awaiting_approval (written_off: a note is
--                      required, the user confirms; the bike stays as it is)
--   decide_write_off   {caseId, decision, note?}   awaiting_approval -> closed written_off
--                      (approve: the bike retired) or -> inspected (refuse); never by the person
--                      who asked for the write-off
-- Outcomes of its own: case_open, case_inspection_requested, case_inspected,
-- case_awaiting_approval, case_closed (a step from another state: the word names the case's
-- step), note_required (audited as invalid), same_person (audited as denied); each with the
-- case as it stands (fleet.case_step_refusal), which the server shows as the refusal's
-- structuredContent.
-- Visible cases: fleet.case_visible; an invisible case reads as not_found. Order of locks, the
-- same as fleet.report_damaged_bike_as's: the key, the bike's row, then the case's. The step
-- is a case event with its note; a step that waits for someone else opens the call's task when
-- one is offered (c.task_id: fleet.task_open), in this same transaction. A question names the
-- case as its last event left it (fleet.case_version): a yes to a question about an earlier
-- version is asked again, after what happened since (fleet.case_changed).
CREATE OR REPLACE FUNCTION fleet.case_step_as(c fleet.write_call)
RETURNS fleet.write_answer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    w       fleet.write_state;
    v_case  text := c.args ->> 'caseId';
    v_note  text := c.args ->> 'note';
    tr      record;
    cs      record;
    bk      record;
    v_to    text;
    v_event bigint;
    v_version text;
    v_now   timestamptz := clock_timestamp();
BEGIN
    SELECT s.* INTO tr FROM fleet.case_steps() s
     WHERE s.tool = c.tool AND s.branch IS NOT DISTINCT FROM c.args ->> s.argument;
    w := fleet.write_begin(tr.tool, c,
                           tr.tool IS NOT NULL AND jsonb_typeof(c.args -> 'caseId') = 'string'
                           AND coalesce(jsonb_typeof(c.args -> 'note'), 'string') = 'string'
                           AND coalesce(char_length(v_note) BETWEEN 1 AND 1000, true));
    IF (w.answer).outcome IS NOT NULL THEN RETURN w.answer; END IF;
    SELECT x.bike_id, x.opened_by INTO cs FROM cases x WHERE x.case_id = v_case;
    IF NOT FOUND OR NOT fleet.case_visible((w.acting).role, c.subject, v_case, cs.opened_by) THEN
        RETURN fleet.write_stop(w, 'not_found');
    END IF;
    SELECT b.status, b.region INTO bk FROM bikes b WHERE b.bike_id = cs.bike_id FOR UPDATE;
    SELECT x.* INTO cs FROM cases x WHERE x.case_id = v_case FOR UPDATE;

    -- The step's own rules, each refused with its own word and the case as it stands (its
    -- step and the tools that take the next one: fleet.case_step_refusal).
    IF cs.state <> tr.step_from THEN
        RETURN fleet.write_stop(w, 'case_' || cs.state, cs.region,
                                p_result => fleet.case_step_refusal(v_case));
    ELSIF tr.branch = 'written_off' AND nullif(btrim(v_note), '') IS NULL THEN
        RETURN fleet.write_stop(w, 'note_required', cs.region, p_audit => 'invalid',
                                p_result => fleet.case_step_refusal(v_case));
    ELSIF NOT fleet.case_step_allowed(c.tool, c.subject, cs.write_off_requested_by) THEN
        RETURN fleet.write_stop(w, 'same_person', cs.region, p_audit => 'denied',
                                p_result => fleet.case_step_refusal(v_case));
    END IF;

    -- What the step does to the bike: closing repaired or without fault puts a bike the case
    -- holds (unavailable) back in service when no other case of it is active; one in repair,
    -- lost or retired keeps its status. An approved write-off retires it.
    v_to := CASE WHEN tr.event = 'write_off_approved' THEN 'retired'
                 WHEN tr.event = 'closed' AND bk.status = 'unavailable'
                      AND NOT EXISTS (SELECT 1 FROM cases o
                                       WHERE o.bike_id = cs.bike_id AND o.state <> 'closed'
                                         AND o.case_id <> v_case)
                 THEN 'available'
                 ELSE bk.status END;
    -- The question names the case as its last event left it: an answer to a question about
    -- an earlier version is asked again, saying what happened since (fleet.write_asks).
    v_version := fleet.case_version(v_case);
    IF fleet.write_asks(w, coalesce(tr.branch = 'written_off', false)
                           OR (w.acting).requires_confirmation, v_version) THEN
        RETURN fleet.write_stop(w, 'confirmation_required', cs.region,
                                fleet.case_step_question(tr.event,
                                                         coalesce(c.args ->> 'finding', tr.branch),
                                                         v_case, cs.bike_id, cs.region, bk.status,
                                                         v_to, cs.write_off_requested_by,
                                                         (SELECT e.note FROM case_events e
                                                           WHERE e.case_id = v_case
                                                             AND e.kind = 'write_off_requested'
                                                             AND cs.state = 'awaiting_approval'
                                                           ORDER BY e.event_id DESC LIMIT 1)),
                                p_version => v_version,
                                p_changed => fleet.case_changed(v_case, c.version));
    END IF;

    IF v_to <> bk.status THEN
        UPDATE bikes b SET status = v_to, updated_at = v_now WHERE b.bike_id = cs.bike_id;
        INSERT INTO bike_status_history (bike_id, region, status_from, status_to, case_id,
                                         changed_by, changed_via, changed_at)
        VALUES (cs.bike_id, bk.region, bk.status, v_to, v_case, c.subject, c.client, v_now);
    END IF;
    UPDATE cases x
       SET state = tr.step_to,
           updated_at = v_now,
           finding = coalesce(c.args ->> 'finding', x.finding),
           resolution = CASE WHEN tr.step_to <> 'closed' THEN NULL
                             WHEN tr.event = 'write_off_approved' THEN 'written_off'
                             WHEN tr.argument = 'resolution' THEN tr.branch END,
           closed_at = CASE WHEN tr.step_to = 'closed' THEN v_now END,
           closed_by = CASE WHEN tr.step_to = 'closed' THEN c.subject END,
           closed_via = CASE WHEN tr.step_to = 'closed' THEN c.client END,
           write_off_requested_by = CASE tr.step_to WHEN 'awaiting_approval' THEN c.subject
                                                    WHEN 'closed' THEN x.write_off_requested_by
                                                    END,
           write_off_requested_via = CASE tr.step_to WHEN 'awaiting_approval' THEN c.client
                                                     WHEN 'closed' THEN x.write_off_requested_via
                                                     END,
           write_off_requested_at = CASE tr.step_to WHEN 'awaiting_approval' THEN v_now
                                                    WHEN 'closed' THEN x.write_off_requested_at
                                                    END
     WHERE x.case_id = v_case;
    INSERT INTO case_events (case_id, region, kind, actor_subject, actor_client, at, note)
    VALUES (v_case, cs.region, tr.event, c.subject, c.client, v_now, v_note)
    RETURNING event_id INTO v_event;
    RETURN fleet.write_done(w, cs.region, fleet.case_step_view(v_case), tr.event,
                            fleet.task_open(c, tr.task, v_case, cs.region, v_event));
END
$$;

REVOKE ALL ON FUNCTION fleet.case_step_as(fleet.write_call) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_step_as(fleet.write_call) TO fleet_app;
