-- report_damaged_bike in one round trip and one transaction, as the caller under forced RLS.
-- Always returns one row: the caller's rights (out_role .. out_requires_confirmation, as in
-- bike_status_as), then
-- out_outcome: ok | replayed | forbidden | not_found | key_conflict | case_not_found |
-- case_closed | case_other_bike | confirmation_required, then what the caller may see.
-- out_status is the bike's status after the report (ok, replayed) or, with
-- confirmation_required, the status it would have after it.
-- Order of locks, the same for every call: the idempotency key (advisory, per subject and
-- key), then the bike row (FOR UPDATE); concurrent reports on one bike therefore serialize and
-- see each other's open case, and no two calls can wait on each other in reverse order.
-- p_tool is the calling tool's name as its catalogue row gives it (the audit rows and the
-- idempotency keys carry it): the server is its one source.
CREATE OR REPLACE FUNCTION fleet.report_damage_as(p_subject text, p_client text, p_bike text, p_issue text,
                                                  p_description text, p_case text, p_key text,
                                                  p_digest text, p_request_id text, p_confirmed boolean,
                                                  p_tool text)
RETURNS TABLE (out_role text, out_regions text[], out_is_human boolean,
               out_client_may_read boolean, out_client_may_report boolean,
               out_requires_confirmation boolean, out_outcome text, out_bike_id text,
               out_region text, out_status_before text, out_status text,
               out_open_case_id text, out_report_id text, out_case_id text,
               out_recorded_at text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    a        fleet.acting;
    may      boolean;
    bk       record;
    open_c   record;
    given    record;
    k        record;
    v_now    timestamptz;
    v_case   text;
    v_report text;
    v_status text;
    v_audit  text;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    may := coalesce(a.role IN ('customer_care', 'fleet_operator') AND a.is_human
                    AND a.client_may_report, false);
    PERFORM set_config('app.may_report', CASE WHEN may THEN 'on' ELSE '' END, true);
    out_role := a.role;
    out_regions := a.regions;
    out_is_human := a.is_human;
    out_client_may_read := a.client_may_read;
    out_client_may_report := a.client_may_report;
    out_requires_confirmation := a.requires_confirmation;

    IF NOT may THEN
        out_outcome := 'forbidden';
        PERFORM audit_record(p_tool, p_bike, p_digest, 'denied',
                             'role, client application or subject may not report',
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    IF p_key IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('idem/' || p_subject || '/' || p_key, 0));
    END IF;

    SELECT b.bike_id, b.region, b.status INTO bk
      FROM bikes b WHERE b.bike_id = p_bike FOR UPDATE;
    IF NOT FOUND THEN
        out_outcome := 'not_found';
        PERFORM audit_record(p_tool, p_bike, p_digest, 'not_found', NULL,
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;
    out_bike_id := bk.bike_id;
    out_region := bk.region;
    out_status_before := bk.status;
    -- What a report does to the bike's status, decided here only: a bike in repair, lost or
    -- retired keeps its status, any other becomes unavailable. Said before the confirmation
    -- too, so that the question shows the very status the report would leave.
    v_status := CASE WHEN bk.status IN ('in_repair', 'lost', 'retired') THEN bk.status
                     ELSE 'unavailable' END;

    IF p_key IS NOT NULL THEN
        SELECT * INTO k FROM idempotency_keys ik
         WHERE ik.subject = p_subject AND ik.idem_key = p_key;
        IF FOUND THEN
            IF k.args_digest <> p_digest OR k.tool <> p_tool THEN
                out_outcome := 'key_conflict';
                v_audit := 'conflict';
            ELSE
                out_outcome := 'replayed';
                v_audit := 'replayed';
                out_bike_id := k.bike_id;
                out_status := k.status;
                out_report_id := k.report_id;
                out_case_id := k.case_id;
                out_recorded_at := to_char(k.recorded_at AT TIME ZONE 'UTC',
                                           'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
            END IF;
            PERFORM audit_record(p_tool, p_bike, p_digest, v_audit, NULL,
                                 p_request_id, out_report_id);
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;

    -- The bike's open case; stable while we hold the bike's row lock.
    SELECT c.case_id INTO open_c FROM cases c WHERE c.bike_id = p_bike AND c.state = 'open';
    out_open_case_id := open_c.case_id;

    IF p_case IS NOT NULL THEN
        -- Visible: in the perimeter (RLS), and for roles other than fleet_operator, a case
        -- the caller opened or reported into. Invisible reads exactly like nonexistent.
        SELECT c.case_id, c.state, c.bike_id INTO given FROM cases c
         WHERE c.case_id = p_case
           AND (a.role = 'fleet_operator' OR c.opened_by = p_subject
                OR EXISTS (SELECT 1 FROM damage_reports r
                            WHERE r.case_id = c.case_id AND r.reported_by = p_subject));
        IF NOT FOUND THEN
            out_outcome := 'case_not_found';
        ELSIF given.state <> 'open' THEN
            out_outcome := 'case_closed';
        ELSIF given.bike_id <> p_bike THEN
            out_outcome := 'case_other_bike';
        END IF;
        IF out_outcome IS NOT NULL THEN
            PERFORM audit_record(p_tool, p_bike, p_digest, 'failed',
                                 out_outcome, p_request_id, NULL);
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;

    IF a.requires_confirmation AND NOT coalesce(p_confirmed, false) THEN
        out_outcome := 'confirmation_required';
        out_status := v_status;
        PERFORM audit_record(p_tool, p_bike, p_digest, 'confirmation_required',
                             NULL, p_request_id, NULL);
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
    VALUES (v_report, bk.bike_id, bk.region, v_case, p_issue, p_description, bk.status,
            v_status, p_subject, p_client, v_now);
    UPDATE cases SET report_count = report_count + 1, updated_at = v_now
     WHERE case_id = v_case;
    INSERT INTO case_events (case_id, region, kind, report_id, actor_subject, actor_client, at)
    VALUES (v_case, bk.region, 'report_added', v_report, p_subject, p_client, v_now);
    IF v_status <> bk.status THEN
        UPDATE bikes SET status = v_status, updated_at = v_now WHERE bike_id = bk.bike_id;
    END IF;
    INSERT INTO bike_status_history (bike_id, region, status_from, status_to, report_id,
                                     changed_by, changed_via, changed_at)
    VALUES (bk.bike_id, bk.region, bk.status, v_status, v_report, p_subject, p_client, v_now);
    IF p_key IS NOT NULL THEN
        INSERT INTO idempotency_keys (subject, idem_key, tool, args_digest, client_id, region,
                                      bike_id, report_id, case_id, status, recorded_at)
        VALUES (p_subject, p_key, p_tool, p_digest, p_client, bk.region,
                bk.bike_id, v_report, v_case, v_status, v_now);
    END IF;
    PERFORM audit_record(p_tool, p_bike, p_digest, 'ok', NULL, p_request_id,
                         v_report);
    out_outcome := 'ok';
    out_status := v_status;
    out_report_id := v_report;
    out_case_id := v_case;
    out_open_case_id := v_case;
    out_recorded_at := to_char(v_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                              text, boolean, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                                   text, boolean, text) TO fleet_app;

-- The previous release's form, without p_tool: kept while a rolling upgrade runs both releases
-- on one database (expand now, contract in a later release).
CREATE OR REPLACE FUNCTION fleet.report_damage_as(p_subject text, p_client text, p_bike text, p_issue text,
                                                  p_description text, p_case text, p_key text,
                                                  p_digest text, p_request_id text, p_confirmed boolean)
RETURNS TABLE (out_role text, out_regions text[], out_is_human boolean,
               out_client_may_read boolean, out_client_may_report boolean,
               out_requires_confirmation boolean, out_outcome text, out_bike_id text,
               out_region text, out_status_before text, out_status text,
               out_open_case_id text, out_report_id text, out_case_id text,
               out_recorded_at text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
    SELECT * FROM fleet.report_damage_as(p_subject, p_client, p_bike, p_issue, p_description,
                                         p_case, p_key, p_digest, p_request_id, p_confirmed,
                                         'report_damaged_bike')
$$;

REVOKE ALL ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                              text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                                   text, boolean) TO fleet_app;
