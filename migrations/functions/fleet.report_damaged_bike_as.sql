-- report_damaged_bike in one round trip and one transaction, as the caller under forced RLS, in the
-- shape of every write function (migrations/README.md, "A write function"). p_args is the call's
-- arguments object: bikeId, issue, description and caseId (optional); the idempotency key comes
-- in p_key (NULL: none), whatever p_args says.
-- Always returns one row: the caller's rights (role .. requires_confirmation, as fleet.act_as
-- returns them), then
-- outcome: ok | replayed | forbidden | invalid_arguments | not_found | key_conflict |
-- case_not_found | case_closed | case_other_bike | confirmation_required,
-- region: the bike's region once it is found, effect: with confirmation_required, what the report
-- would do, in one sentence, then the report's own columns. status is the bike's status after the
-- report (ok, replayed) or, with confirmation_required, the status it would have after it.
-- Who may report, and when to ask first, is fleet.capabilities' row 'damage_report'
-- (fleet.write_begin, fleet.needs_confirmation).
-- Order of locks, the same for every call: the idempotency key (fleet.idempotency_claim:
-- advisory, per subject and key), then the bike row (FOR UPDATE); concurrent reports on one bike
-- therefore serialize and see each other's open case, and no two calls can wait on each other in
-- reverse order. Every outcome decided here leaves its audit row (fleet.audit_record).
CREATE OR REPLACE FUNCTION fleet.report_damaged_bike_as(p_subject text, p_client text,
                                                        p_args jsonb, p_tool text, p_key text,
                                                        p_digest text, p_request_id text,
                                                        p_confirmed boolean)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean, outcome text,
               region text, effect text, bike_id text, status text, report_id text,
               case_id text, recorded_at text, status_before text, open_case_id text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
#variable_conflict use_column
DECLARE
    a        fleet.acting;
    v_bike   text := p_args ->> 'bikeId';
    v_issue  text := p_args ->> 'issue';
    v_given  text := p_args ->> 'caseId';
    claim    record;
    bk       record;
    open_c   record;
    given    record;
    v_now    timestamptz;
    v_case   text;
    v_report text;
    v_status text;
    v_at     text;
BEGIN
    a := fleet.write_begin('damage_report', p_subject, p_client);
    role := a.role;
    regions := a.regions;
    is_human := a.is_human;
    client_may_read := a.client_may_read;
    client_may_report := a.client_may_report;
    requires_confirmation := a.requires_confirmation;

    IF NOT fleet.current_may_report() THEN
        outcome := 'forbidden';
        PERFORM audit_record(p_tool, v_bike, p_digest, 'denied',
                             'role, client application or subject may not report',
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    -- The server checked the arguments against the tool's input schema; a direct caller gets
    -- the same shapes held here (the values' rules are the tables' constraints).
    IF jsonb_typeof(p_args) IS DISTINCT FROM 'object'
       OR jsonb_typeof(p_args -> 'bikeId') IS DISTINCT FROM 'string'
       OR jsonb_typeof(p_args -> 'issue') IS DISTINCT FROM 'string'
       OR coalesce(jsonb_typeof(p_args -> 'description'), 'string') <> 'string'
       OR coalesce(jsonb_typeof(p_args -> 'caseId'), 'string') <> 'string' THEN
        outcome := 'invalid_arguments';
        PERFORM audit_record(p_tool, v_bike, p_digest, 'invalid',
                             'bikeId and issue must be strings, description and caseId strings '
                             || 'when given', p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    SELECT * INTO claim FROM fleet.idempotency_claim(p_subject, p_key, p_tool, p_digest);

    SELECT b.bike_id, b.region, b.status INTO bk
      FROM bikes b WHERE b.bike_id = v_bike FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_found';
        PERFORM audit_record(p_tool, v_bike, p_digest, 'not_found', NULL, p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;
    bike_id := bk.bike_id;
    region := bk.region;
    status_before := bk.status;
    -- What a report does to the bike's status, decided here only: a bike in repair, lost or
    -- retired keeps its status, any other becomes unavailable. Said before the confirmation
    -- too, so that the question shows the very status the report would leave.
    v_status := CASE WHEN bk.status IN ('in_repair', 'lost', 'retired') THEN bk.status
                     ELSE 'unavailable' END;

    IF claim.state = 'replayed' THEN
        outcome := 'replayed';
        bike_id := claim.result ->> 'bike_id';
        status := claim.result ->> 'status';
        report_id := claim.result ->> 'report_id';
        case_id := claim.result ->> 'case_id';
        recorded_at := claim.result ->> 'recorded_at';
        PERFORM audit_record(p_tool, v_bike, p_digest, 'replayed', NULL, p_request_id,
                             claim.result ->> 'report_id');
        RETURN NEXT;
        RETURN;
    ELSIF claim.state = 'conflict' THEN
        outcome := 'key_conflict';
        PERFORM audit_record(p_tool, v_bike, p_digest, 'conflict', NULL, p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    -- The bike's active case (at any step before closed: a report joins it); stable while we
    -- hold the bike's row lock, which every step of the workflow takes first too.
    SELECT c.case_id, c.state INTO open_c FROM cases c
     WHERE c.bike_id = v_bike AND c.state <> 'closed';
    open_case_id := open_c.case_id;

    IF v_given IS NOT NULL THEN
        -- Visible: in the perimeter (RLS) and by fleet.case_visible. Invisible reads exactly
        -- like nonexistent.
        SELECT c.case_id, c.state, c.bike_id INTO given FROM cases c
         WHERE c.case_id = v_given
           AND fleet.case_visible(a.role, p_subject, c.case_id, c.opened_by);
        IF NOT FOUND THEN
            outcome := 'case_not_found';
        ELSIF given.state = 'closed' THEN
            outcome := 'case_closed';
        ELSIF given.bike_id <> v_bike THEN
            outcome := 'case_other_bike';
        END IF;
        IF outcome IS NOT NULL THEN
            PERFORM audit_record(p_tool, v_bike, p_digest, 'failed', outcome, p_request_id,
                                 NULL);
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;

    IF fleet.needs_confirmation('damage_report', a, p_confirmed) THEN
        outcome := 'confirmation_required';
        status := v_status;
        -- The question the user confirms, in their words: the issue, the bike and its region
        -- by name, what happens to the bike and to its case; no tool, code or client id.
        SELECT format('File a damage report "%s" on bike %s (%s)? %s, and %s.',
                         replace(v_issue, '_', ' '), bk.bike_id,
                         coalesce((SELECT r.name FROM regions r WHERE r.code = bk.region),
                                  bk.region),
                         CASE WHEN v_status = bk.status
                              THEN format('The bike stays %s', lower(s_now.label))
                              ELSE format('The bike becomes %s (it is %s now)',
                                          lower(s_after.label), lower(s_now.label)) END,
                         CASE WHEN open_c.case_id IS NULL THEN 'a new investigation case is opened'
                              ELSE 'the report is added to case ' || open_c.case_id || ', '
                                   || CASE open_c.state
                                          WHEN 'inspection_requested'
                                              THEN 'which is waiting for an inspection'
                                          WHEN 'inspected' THEN 'which has been inspected'
                                          WHEN 'awaiting_approval'
                                              THEN 'whose write-off is waiting for approval'
                                          ELSE 'which is open' END
                         END)
          INTO effect
          FROM status_codes s_now, status_codes s_after
         WHERE s_now.code = bk.status AND s_after.code = v_status;
        PERFORM audit_record(p_tool, v_bike, p_digest, 'confirmation_required', NULL,
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    v_now := clock_timestamp();
    v_case := open_c.case_id;
    IF v_case IS NULL THEN
        v_case := 'IC-' || nextval('fleet.case_seq');
        INSERT INTO cases (case_id, bike_id, region, state, opened_at, opened_by, opened_via,
                           updated_at, report_count)
        VALUES (v_case, bk.bike_id, bk.region, 'open', v_now, p_subject, p_client, v_now, 0);
        INSERT INTO case_events (case_id, region, kind, report_id, actor_subject, actor_client, at)
        VALUES (v_case, bk.region, 'opened', NULL, p_subject, p_client, v_now);
    END IF;
    -- A number no restore hands out again (fleet.clock_number: the clock and the sequence).
    v_report := 'DR-' || fleet.clock_number('fleet.report_seq');
    INSERT INTO damage_reports (report_id, bike_id, region, case_id, issue, description,
                                status_before, status_after, reported_by, reported_via,
                                recorded_at)
    VALUES (v_report, bk.bike_id, bk.region, v_case, v_issue, p_args ->> 'description',
            bk.status, v_status, p_subject, p_client, v_now);
    UPDATE cases c SET report_count = c.report_count + 1, updated_at = v_now
     WHERE c.case_id = v_case;
    INSERT INTO case_events (case_id, region, kind, report_id, actor_subject, actor_client, at)
    VALUES (v_case, bk.region, 'report_added', v_report, p_subject, p_client, v_now);
    IF v_status <> bk.status THEN
        UPDATE bikes b SET status = v_status, updated_at = v_now WHERE b.bike_id = bk.bike_id;
    END IF;
    INSERT INTO bike_status_history (bike_id, region, status_from, status_to, report_id,
                                     changed_by, changed_via, changed_at)
    VALUES (bk.bike_id, bk.region, bk.status, v_status, v_report, p_subject, p_client, v_now);
    v_at := to_char(v_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
    PERFORM fleet.idempotency_keep(p_subject, p_client, p_key, p_tool, p_digest, bk.region,
                                   jsonb_build_object('bike_id', bk.bike_id, 'status', v_status,
                                                      'report_id', v_report, 'case_id', v_case,
                                                      'recorded_at', v_at));
    PERFORM audit_record(p_tool, v_bike, p_digest, 'ok', NULL, p_request_id, v_report);
    outcome := 'ok';
    status := v_status;
    report_id := v_report;
    case_id := v_case;
    open_case_id := v_case;
    recorded_at := v_at;
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION fleet.report_damaged_bike_as(text, text, jsonb, text, text, text, text,
                                                    boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_damaged_bike_as(text, text, jsonb, text, text, text, text,
                                                       boolean) TO fleet_app;
