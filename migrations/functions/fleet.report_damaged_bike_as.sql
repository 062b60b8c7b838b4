-- report_damaged_bike, a write (migrations/README.md, "A write function"; its declaration
-- server/capabilities/damage_report.json): c.args holds bikeId, issue, and optionally
-- description and caseId. In one transaction as the caller under forced row-level security: a
-- damage report, the bike's status as fleet.report_leaves says, its active case opened or the
-- report added to it, a status-history row, the result recorded under the key, the audit row.
-- Outcomes of its own: case_not_found, case_closed, case_other_bike (a caseId that is not the
-- bike's active case, in words that read alike for a case the caller may not see). A question
-- names the bike's status and its active case at its step: a yes to a question about another
-- version of them is asked again, after what changed (fleet.report_changed).
-- Order of locks, the same in every write: the key (fleet.write_begin), then the bike's row:
-- reports on one bike serialize and see each other's case, and the workflow's steps take the
-- bike's row first too.
CREATE OR REPLACE FUNCTION fleet.report_damaged_bike_as(c fleet.write_call)
RETURNS fleet.write_answer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    w        fleet.write_state;
    v_bike   text := c.args ->> 'bikeId';
    bk       record;
    oc       record;
    given    record;
    v_to     text;
    v_case   text;
    v_report text;
    v_version text;
    v_now    timestamptz := clock_timestamp();
BEGIN
    w := fleet.write_begin('damage_report', c,
                           jsonb_typeof(c.args -> 'bikeId') = 'string'
                           AND jsonb_typeof(c.args -> 'issue') = 'string'
                           AND coalesce(jsonb_typeof(c.args -> 'description'), 'string') = 'string'
                           AND coalesce(jsonb_typeof(c.args -> 'caseId'), 'string') = 'string');
    IF (w.answer).outcome IS NOT NULL THEN RETURN w.answer; END IF;
    SELECT b.bike_id, b.region, b.status INTO bk FROM bikes b WHERE b.bike_id = v_bike FOR UPDATE;
    IF NOT FOUND THEN RETURN fleet.write_stop(w, 'not_found'); END IF;
    -- The bike's active case (at any step before closed: a report joins it).
    SELECT x.case_id, x.state INTO oc FROM cases x WHERE x.bike_id = v_bike AND x.state <> 'closed';
    IF c.args ? 'caseId' THEN
        SELECT x.state, x.bike_id INTO given FROM cases x
         WHERE x.case_id = c.args ->> 'caseId'
           AND fleet.case_visible((w.acting).role, c.subject, x.case_id, x.opened_by);
        IF NOT FOUND THEN RETURN fleet.write_stop(w, 'case_not_found', bk.region); END IF;
        IF given.state = 'closed' THEN RETURN fleet.write_stop(w, 'case_closed', bk.region); END IF;
        IF given.bike_id <> v_bike THEN RETURN fleet.write_stop(w, 'case_other_bike', bk.region); END IF;
    END IF;
    v_to := fleet.report_leaves(bk.status);
    -- The question names the bike's status and its active case at its step: an answer to a
    -- question about an earlier version is asked again, saying what changed (fleet.write_asks).
    v_version := format('%s|%s|%s', bk.status, oc.case_id, oc.state);
    IF fleet.write_asks(w, false, v_version) THEN
        -- The question the user confirms, in their words: the issue, the bike and its region
        -- by name, what happens to the bike and to its case; no tool, code or client id.
        RETURN fleet.write_stop(w, 'confirmation_required', bk.region, (
            SELECT format('File a damage report "%s" on bike %s (%s)? %s, and %s.',
                          replace(c.args ->> 'issue', '_', ' '), bk.bike_id,
                          coalesce((SELECT r.name FROM regions r WHERE r.code = bk.region),
                                   bk.region),
                          CASE WHEN v_to = bk.status
                               THEN format('The bike stays %s', lower(s_now.label))
                               ELSE format('The bike becomes %s (it is %s now)',
                                           lower(s_after.label), lower(s_now.label)) END,
                          CASE WHEN oc.case_id IS NULL THEN 'a new investigation case is opened'
                               ELSE 'the report is added to case ' || oc.case_id || ', '
                                    || CASE oc.state
                                           WHEN 'inspection_requested'
                                               THEN 'which is waiting for an inspection'
                                           WHEN 'inspected' THEN 'which has been inspected'
                                           WHEN 'awaiting_approval'
                                               THEN 'whose write-off is waiting for approval'
                                           ELSE 'which is open' END
                          END)
              FROM status_codes s_now, status_codes s_after
             WHERE s_now.code = bk.status AND s_after.code = v_to),
            p_version => v_version,
            p_changed => fleet.report_changed(bk.bike_id, c.version, bk.status, oc.case_id,
                                              oc.state));
    END IF;

    v_case := oc.case_id;
    IF v_case IS NULL THEN
        v_case := 'IC-' || nextval('fleet.case_seq');
        INSERT INTO cases (case_id, bike_id, region, state, opened_at, opened_by, opened_via,
                           updated_at, report_count)
        VALUES (v_case, bk.bike_id, bk.region, 'open', v_now, c.subject, c.client, v_now, 0);
        INSERT INTO case_events (case_id, region, kind, actor_subject, actor_client, at)
        VALUES (v_case, bk.region, 'opened', c.subject, c.client, v_now);
    END IF;
    -- A number no restore hands out again (fleet.clock_number: the clock and the sequence).
    v_report := 'DR-' || fleet.clock_number('fleet.report_seq');
    INSERT INTO damage_reports (report_id, bike_id, region, case_id, issue, description,
                                status_before, status_after, reported_by, reported_via,
                                recorded_at)
    VALUES (v_report, bk.bike_id, bk.region, v_case, c.args ->> 'issue',
            c.args ->> 'description', bk.status, v_to, c.subject, c.client, v_now);
    UPDATE cases x SET report_count = x.report_count + 1, updated_at = v_now
     WHERE x.case_id = v_case;
    INSERT INTO case_events (case_id, region, kind, report_id, actor_subject, actor_client, at)
    VALUES (v_case, bk.region, 'report_added', v_report, c.subject, c.client, v_now);
    IF v_to <> bk.status THEN
        UPDATE bikes b SET status = v_to, updated_at = v_now WHERE b.bike_id = bk.bike_id;
    END IF;
    INSERT INTO bike_status_history (bike_id, region, status_from, status_to, report_id,
                                     changed_by, changed_via, changed_at)
    VALUES (bk.bike_id, bk.region, bk.status, v_to, v_report, c.subject, c.client, v_now);
    RETURN fleet.write_done(w, bk.region, to_jsonb(r)) FROM (
        SELECT bk.bike_id, v_to AS status, v_report AS report_id, v_case AS case_id,
               to_char(v_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS recorded_at) r;
END
$$;

REVOKE ALL ON FUNCTION fleet.report_damaged_bike_as(fleet.write_call) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_damaged_bike_as(fleet.write_call) TO fleet_app;
