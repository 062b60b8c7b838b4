-- The investigation case's workflow, one step per call, in one round trip and one transaction as
-- the caller under forced RLS, in the shape of every write function (migrations/README.md, "A
-- write function"). One function serves the workflow's four tools, whose declarations name it:
-- p_tool says which step (fleet.case_steps, the state machine), and it is the capability whose
-- rights, people-only rule and confirmation policy apply (fleet.capabilities' row of that name):
--   request_inspection {caseId, note?, idempotencyKey?}            open -> inspection_requested
--   record_inspection  {caseId, finding, note?, idempotencyKey?}   inspection_requested -> inspected
--   close_case         {caseId, resolution, note?, idempotencyKey?} inspected -> closed
--                      (repaired, no_fault_found: the bike back to available when it is held
--                      unavailable and no other case of it is active) or -> awaiting_approval
--                      (written_off: a note is required; the bike stays as it is)
--   decide_write_off   {caseId, decision, note?, idempotencyKey?}  awaiting_approval -> closed
--                      written_off (approve: the bike retired) or -> inspected (refuse); never
--                      by the person who asked for the write-off
-- Always returns one row: the caller's rights (role .. requires_confirmation, as fleet.act_as
-- returns them), then
-- outcome: ok | replayed | forbidden | invalid_arguments | not_found | key_conflict |
-- confirmation_required | case_open | case_inspection_requested | case_inspected |
-- case_awaiting_approval | case_closed (a step from the wrong state: the word names the case's
-- current step) | note_required (close_case written_off without a note) | same_person
-- (decide_write_off by the person who asked),
-- region: the case's region once it is found, effect: with confirmation_required, what the step
-- would do, in one sentence, then the case as fleet.case_step_view shows it (after the step with
-- ok and replayed; as it stands with a wrong step; nothing else otherwise).
-- Visible cases: fleet.case_visible (in the perimeter; fleet operators and technicians any,
-- others the ones they opened or reported into); an invisible case reads as not_found.
-- Order of locks, the same as report_damaged_bike_as's: the idempotency key, the bike row, then
-- the case row (FOR UPDATE): a step and a report on the same bike serialize, and no two calls
-- wait on each other in reverse order. Every outcome decided here leaves its audit row
-- (fleet.audit_record, target the caseId), and the step its case event with the note.
CREATE OR REPLACE FUNCTION fleet.case_step_as(p_subject text, p_client text, p_args jsonb,
                                              p_tool text, p_key text, p_digest text,
                                              p_request_id text, p_confirmed boolean)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean, outcome text,
               region text, effect text, case_id text, bike_id text, state text, finding text,
               resolution text, bike_status text, updated_at text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
#variable_conflict use_column
DECLARE
    a        fleet.acting;
    v_case   text := p_args ->> 'caseId';
    v_note   text := p_args ->> 'note';
    v_branch text := p_args ->> CASE p_tool WHEN 'close_case' THEN 'resolution'
                                            WHEN 'decide_write_off' THEN 'decision' END;
    v_find   text := CASE p_tool WHEN 'record_inspection' THEN p_args ->> 'finding' END;
    tr       record;
    claim    record;
    c        record;
    bk       record;
    v_bike   text;
    v_now    timestamptz;
    v_what   text;
BEGIN
    a := fleet.write_begin(CASE WHEN EXISTS (SELECT FROM fleet.case_steps() s
                                              WHERE s.tool = p_tool) THEN p_tool END,
                           p_subject, p_client);
    role := a.role;
    regions := a.regions;
    is_human := a.is_human;
    client_may_read := a.client_may_read;
    client_may_report := a.client_may_report;
    requires_confirmation := a.requires_confirmation;

    IF NOT fleet.current_may_report() THEN
        outcome := 'forbidden';
        PERFORM audit_record(p_tool, v_case, p_digest, 'denied',
                             'role, client application or subject may not ' || p_tool,
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    -- The server checked the arguments against the tool's input schema; a direct caller gets
    -- the same rules here.
    SELECT s.* INTO tr FROM fleet.case_steps() s
     WHERE s.tool = p_tool AND s.branch IS NOT DISTINCT FROM v_branch;
    IF NOT FOUND
       OR jsonb_typeof(p_args) IS DISTINCT FROM 'object'
       OR jsonb_typeof(p_args -> 'caseId') IS DISTINCT FROM 'string'
       OR coalesce(jsonb_typeof(p_args -> 'note'), 'string') <> 'string'
       OR coalesce(char_length(v_note) NOT BETWEEN 1 AND 1000, false)
       OR (p_tool = 'record_inspection'
           AND NOT coalesce(v_find = ANY (ARRAY['repairable', 'no_fault', 'beyond_repair']), false))
    THEN
        outcome := 'invalid_arguments';
        PERFORM audit_record(p_tool, v_case, p_digest, 'invalid',
                             'caseId must be a string, note a string of 1 to 1000 characters '
                             || 'when given, and the step''s own argument one of its values',
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    SELECT * INTO claim FROM fleet.idempotency_claim(p_subject, p_key, p_tool, p_digest);

    SELECT cs.bike_id, cs.opened_by INTO c FROM cases cs WHERE cs.case_id = v_case;
    IF NOT FOUND OR NOT fleet.case_visible(a.role, p_subject, v_case, c.opened_by) THEN
        outcome := 'not_found';
        PERFORM audit_record(p_tool, v_case, p_digest, 'not_found', NULL, p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;
    v_bike := c.bike_id;
    SELECT b.status, b.region INTO bk FROM bikes b WHERE b.bike_id = v_bike FOR UPDATE;
    SELECT cs.* INTO c FROM cases cs WHERE cs.case_id = v_case FOR UPDATE;
    region := c.region;

    IF claim.state = 'replayed' THEN
        outcome := 'replayed';
        case_id := claim.result ->> 'case_id';
        bike_id := claim.result ->> 'bike_id';
        state := claim.result ->> 'state';
        finding := claim.result ->> 'finding';
        resolution := claim.result ->> 'resolution';
        bike_status := claim.result ->> 'bike_status';
        updated_at := claim.result ->> 'updated_at';
        PERFORM audit_record(p_tool, v_case, p_digest, 'replayed', NULL, p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    ELSIF claim.state = 'conflict' THEN
        outcome := 'key_conflict';
        PERFORM audit_record(p_tool, v_case, p_digest, 'conflict', NULL, p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    -- The step's own rules, each refused with its own word.
    IF c.state <> tr.step_from THEN
        outcome := 'case_' || c.state;
    ELSIF tr.branch = 'written_off' AND nullif(btrim(v_note), '') IS NULL THEN
        outcome := 'note_required';
    ELSIF NOT fleet.case_step_allowed(p_tool, p_subject, c.write_off_requested_by) THEN
        outcome := 'same_person';
    END IF;
    IF outcome IS NOT NULL THEN
        SELECT v.case_id, v.bike_id, v.state, v.finding, v.resolution, v.bike_status,
               v.updated_at
          INTO case_id, bike_id, state, finding, resolution, bike_status, updated_at
          FROM fleet.case_step_view(v_case) v;
        PERFORM audit_record(p_tool, v_case, p_digest,
                             CASE outcome WHEN 'note_required' THEN 'invalid'
                                          WHEN 'same_person' THEN 'denied' ELSE 'failed' END,
                             outcome, p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    -- What the step does to the bike: closing repaired or without fault puts a bike the case
    -- holds (unavailable) back in service when no other case of it is active; one in repair,
    -- lost or retired keeps its status. An approved write-off retires it.
    v_what := CASE WHEN tr.event = 'write_off_approved' THEN 'retired'
                   WHEN tr.event = 'closed' AND bk.status = 'unavailable'
                        AND NOT EXISTS (SELECT 1 FROM cases o
                                         WHERE o.bike_id = v_bike AND o.state <> 'closed'
                                           AND o.case_id <> v_case)
                   THEN 'available'
                   ELSE bk.status END;
    IF fleet.needs_confirmation(p_tool, a, p_confirmed,
                                coalesce(tr.branch = 'written_off', false)
                                OR a.requires_confirmation) THEN
        outcome := 'confirmation_required';
        effect := fleet.case_step_question(tr.event, coalesce(v_find, v_branch), v_case, v_bike,
                                           c.region, bk.status, v_what,
                                           c.write_off_requested_by);
        PERFORM audit_record(p_tool, v_case, p_digest, 'confirmation_required', NULL,
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    v_now := clock_timestamp();
    IF v_what <> bk.status THEN
        UPDATE bikes b SET status = v_what, updated_at = v_now WHERE b.bike_id = v_bike;
        INSERT INTO bike_status_history (bike_id, region, status_from, status_to, case_id,
                                         changed_by, changed_via, changed_at)
        VALUES (v_bike, bk.region, bk.status, v_what, v_case, p_subject, p_client, v_now);
    END IF;
    UPDATE cases cs
       SET state = tr.step_to,
           updated_at = v_now,
           finding = coalesce(v_find, cs.finding),
           resolution = CASE WHEN tr.step_to <> 'closed' THEN NULL
                             WHEN p_tool = 'close_case' THEN v_branch
                             ELSE 'written_off' END,
           closed_at = CASE WHEN tr.step_to = 'closed' THEN v_now END,
           closed_by = CASE WHEN tr.step_to = 'closed' THEN p_subject END,
           closed_via = CASE WHEN tr.step_to = 'closed' THEN p_client END,
           write_off_requested_by = CASE tr.step_to WHEN 'awaiting_approval' THEN p_subject
                                                    WHEN 'closed' THEN cs.write_off_requested_by
                                                    END,
           write_off_requested_via = CASE tr.step_to WHEN 'awaiting_approval' THEN p_client
                                                     WHEN 'closed' THEN cs.write_off_requested_via
                                                     END,
           write_off_requested_at = CASE tr.step_to WHEN 'awaiting_approval' THEN v_now
                                                    WHEN 'closed' THEN cs.write_off_requested_at
                                                    END
     WHERE cs.case_id = v_case;
    INSERT INTO case_events (case_id, region, kind, report_id, actor_subject, actor_client, at,
                             note)
    VALUES (v_case, c.region, tr.event, NULL, p_subject, p_client, v_now, v_note);

    SELECT v.case_id, v.bike_id, v.state, v.finding, v.resolution, v.bike_status, v.updated_at
      INTO case_id, bike_id, state, finding, resolution, bike_status, updated_at
      FROM fleet.case_step_view(v_case) v;
    PERFORM fleet.idempotency_keep(p_subject, p_client, p_key, p_tool, p_digest, c.region,
                                   jsonb_build_object('case_id', case_id, 'bike_id', bike_id,
                                                      'state', state, 'finding', finding,
                                                      'resolution', resolution,
                                                      'bike_status', bike_status,
                                                      'updated_at', updated_at));
    PERFORM audit_record(p_tool, v_case, p_digest, 'ok', tr.event, p_request_id, NULL);
    outcome := 'ok';
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION fleet.case_step_as(text, text, jsonb, text, text, text, text, boolean)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_step_as(text, text, jsonb, text, text, text, text, boolean)
    TO fleet_app;
