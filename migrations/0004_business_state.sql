-- 0004: the business state behind report_damaged_bike (DOMAIN.md, SECURITY.md section 4):
-- damage reports, investigation cases and their events, bike status history, idempotency
-- records and the audit log. Every table has row-level security enabled and forced; policies
-- only compare rows against the settings fleet.act_as() fixed for the transaction (no per-row
-- lookups, ARCHITECTURE.md section 8), and every write is stamped with the acting subject and
-- client application, which the WITH CHECK clauses hold to those settings.

-- Whether the current transaction's identity may report damage, as report_damage_as decided it
-- (role customer_care or fleet_operator, human subject, client application allowed to report).
-- The write policies below require it: a bug in a function cannot write without the right.
CREATE FUNCTION fleet.current_may_report() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT coalesce(NULLIF(pg_catalog.current_setting('app.may_report', true), ''), 'off') = 'on' $$;

CREATE SEQUENCE fleet.report_seq START 8001;

ALTER TABLE fleet.cases
    ADD COLUMN updated_at   timestamptz,
    ADD COLUMN report_count integer NOT NULL DEFAULT 0 CHECK (report_count >= 0);

CREATE TABLE fleet.damage_reports (
    report_id     text PRIMARY KEY CHECK (report_id ~ '^DR-[0-9]{4,9}$'),
    bike_id       text NOT NULL REFERENCES fleet.bikes(bike_id),
    region        text NOT NULL REFERENCES fleet.regions(code),
    case_id       text NOT NULL REFERENCES fleet.cases(case_id),
    issue         text NOT NULL CHECK (issue IN ('rear_wheel_blocked', 'flat_tire', 'brake_failure',
                                                  'chain_broken', 'battery_fault', 'frame_damage',
                                                  'lighting_fault', 'other')),
    description   text CHECK (char_length(description) <= 2000),
    status_before text NOT NULL REFERENCES fleet.status_codes(code),
    status_after  text NOT NULL REFERENCES fleet.status_codes(code),
    reported_by   text NOT NULL,
    reported_via  text NOT NULL,
    recorded_at   timestamptz NOT NULL
);
CREATE INDEX damage_reports_case_idx ON fleet.damage_reports (case_id, recorded_at);
CREATE INDEX damage_reports_bike_idx ON fleet.damage_reports (bike_id, recorded_at);

CREATE TABLE fleet.case_events (
    event_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    case_id       text NOT NULL REFERENCES fleet.cases(case_id),
    region        text NOT NULL REFERENCES fleet.regions(code),
    kind          text NOT NULL CHECK (kind IN ('opened', 'report_added', 'closed')),
    report_id     text REFERENCES fleet.damage_reports(report_id),
    actor_subject text NOT NULL,
    actor_client  text NOT NULL,
    at            timestamptz NOT NULL
);
CREATE INDEX case_events_case_idx ON fleet.case_events (case_id, event_id);

CREATE TABLE fleet.bike_status_history (
    change_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bike_id     text NOT NULL REFERENCES fleet.bikes(bike_id),
    region      text NOT NULL REFERENCES fleet.regions(code),
    status_from text NOT NULL REFERENCES fleet.status_codes(code),
    status_to   text NOT NULL REFERENCES fleet.status_codes(code),
    report_id   text REFERENCES fleet.damage_reports(report_id),
    changed_by  text NOT NULL,
    changed_via text NOT NULL,
    changed_at  timestamptz NOT NULL
);
CREATE INDEX bike_status_history_bike_idx ON fleet.bike_status_history (bike_id, change_id);

-- An idempotency key belongs to the subject that chose it: (subject, key) is the key's scope, so
-- keys of different subjects never collide. The first call's result is kept with a digest of
-- its arguments; a replay with the same digest returns it, another digest is a conflict.
CREATE TABLE fleet.idempotency_keys (
    subject     text NOT NULL,
    idem_key    text NOT NULL CHECK (length(idem_key) BETWEEN 1 AND 255),
    tool        text NOT NULL,
    args_digest text NOT NULL CHECK (args_digest ~ '^[0-9a-f]{64}$'),
    client_id   text NOT NULL,
    region      text NOT NULL REFERENCES fleet.regions(code),
    bike_id     text NOT NULL,
    report_id   text NOT NULL REFERENCES fleet.damage_reports(report_id),
    case_id     text NOT NULL,
    status      text NOT NULL,
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (subject, idem_key)
);

-- One row per tools/call, whatever its outcome. Written only through fleet.audit_record().
CREATE TABLE fleet.audit_log (
    audit_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    subject     text NOT NULL,
    client_id   text NOT NULL,
    tool        text NOT NULL,
    target      text,
    args_digest text NOT NULL CHECK (args_digest ~ '^[0-9a-f]{64}$'),
    outcome     text NOT NULL CHECK (outcome IN ('ok', 'replayed', 'denied', 'invalid', 'not_found',
                                                 'conflict', 'failed', 'error', 'declined',
                                                 'confirmation_required', 'rejected')),
    detail      text,
    request_id  text,
    report_id   text
);
CREATE INDEX audit_log_subject_idx ON fleet.audit_log (subject, at);

-- Appends one audit row stamped with the transaction's acting identity (set by act_as).
-- SECURITY DEFINER, owned by the owner role with a fixed search_path: fleet_app has no
-- privilege on fleet.audit_log at all, so a denial (a caller without any write right) is
-- still recorded, and the only way in is this function, which takes the subject and client
-- from the settings (never from its arguments) and the time from the clock.
CREATE FUNCTION fleet.audit_record(p_tool text, p_target text, p_digest text, p_outcome text,
                                   p_detail text, p_request_id text, p_report text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fleet
AS $$
BEGIN
    IF fleet.current_subject() IS NULL OR fleet.current_client() IS NULL THEN
        RAISE EXCEPTION 'audit_record needs an acting identity (fleet.act_as)'
              USING ERRCODE = '42501';
    END IF;
    INSERT INTO fleet.audit_log (subject, client_id, tool, target, args_digest, outcome, detail,
                                 request_id, report_id)
    VALUES (fleet.current_subject(), fleet.current_client(), left(p_tool, 128),
            left(p_target, 64), p_digest, p_outcome, left(p_detail, 500),
            left(p_request_id, 128), p_report);
END
$$;

-- An audit row for a call decided outside the database (invalid arguments, missing scope,
-- refused confirmation, a failure): the identity, then the row, in one round trip.
CREATE FUNCTION fleet.audit_as(p_subject text, p_client text, p_tool text, p_target text,
                               p_digest text, p_outcome text, p_detail text, p_request_id text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
BEGIN
    PERFORM fleet.act_as(p_subject, p_client);
    PERFORM fleet.audit_record(p_tool, p_target, p_digest, p_outcome, p_detail, p_request_id,
                               NULL);
END
$$;

-- get_bike_status with its audit row in the same round trip (ARCHITECTURE.md section 8: the
-- hot path stays one statement). The audit row is written after act_as, from the read's row.
CREATE FUNCTION fleet.bike_status_audited_as(p_subject text, p_client text, p_bike text,
                                             p_digest text, p_request_id text)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               bike_id text, status text, status_label text, region text, station_id text,
               station_name text, battery_pct smallint, last_seen_at text, open_case_id text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
    SELECT s.*
      FROM fleet.bike_status_as(p_subject, p_client, p_bike) AS s
     CROSS JOIN LATERAL (
        SELECT fleet.audit_record('get_bike_status', p_bike, p_digest,
                   CASE WHEN s.role IS NULL OR NOT s.client_may_read THEN 'denied'
                        WHEN s.bike_id IS NULL THEN 'not_found'
                        ELSE 'ok' END,
                   NULL, p_request_id, NULL)) AS audited
$$;

-- report_damaged_bike in one round trip and one transaction, as the caller under forced RLS.
-- Always returns one row: the caller's rights (columns 0..5, as in bike_status_as), then
-- out_outcome: ok | replayed | forbidden | not_found | key_conflict | case_not_found |
-- case_closed | case_other_bike | confirmation_required, then what the caller may see.
-- Order of locks, the same for every call: the idempotency key (advisory, per subject and
-- key), then the bike row (FOR UPDATE); concurrent reports on one bike therefore serialize and
-- see each other's open case, and no two calls can wait on each other in reverse order.
CREATE FUNCTION fleet.report_damage_as(p_subject text, p_client text, p_bike text, p_issue text,
                                       p_description text, p_case text, p_key text,
                                       p_digest text, p_request_id text, p_confirmed boolean)
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
        PERFORM audit_record('report_damaged_bike', p_bike, p_digest, 'denied',
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
        PERFORM audit_record('report_damaged_bike', p_bike, p_digest, 'not_found', NULL,
                             p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;
    out_bike_id := bk.bike_id;
    out_region := bk.region;
    out_status_before := bk.status;

    IF p_key IS NOT NULL THEN
        SELECT * INTO k FROM idempotency_keys ik
         WHERE ik.subject = p_subject AND ik.idem_key = p_key;
        IF FOUND THEN
            IF k.args_digest <> p_digest OR k.tool <> 'report_damaged_bike' THEN
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
            PERFORM audit_record('report_damaged_bike', p_bike, p_digest, v_audit, NULL,
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
            PERFORM audit_record('report_damaged_bike', p_bike, p_digest, 'failed',
                                 out_outcome, p_request_id, NULL);
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;

    IF a.requires_confirmation AND NOT coalesce(p_confirmed, false) THEN
        out_outcome := 'confirmation_required';
        PERFORM audit_record('report_damaged_bike', p_bike, p_digest, 'confirmation_required',
                             NULL, p_request_id, NULL);
        RETURN NEXT;
        RETURN;
    END IF;

    v_now := clock_timestamp();
    v_status := CASE WHEN bk.status IN ('in_repair', 'lost', 'retired') THEN bk.status
                     ELSE 'unavailable' END;
    v_case := open_c.case_id;
    IF v_case IS NULL THEN
        v_case := 'IC-' || nextval('fleet.case_seq');
        INSERT INTO cases (case_id, bike_id, region, state, opened_at, opened_by, opened_via,
                           updated_at, report_count)
        VALUES (v_case, bk.bike_id, bk.region, 'open', v_now, p_subject, p_client, v_now, 0);
        INSERT INTO case_events (case_id, region, kind, report_id, actor_subject, actor_client, at)
        VALUES (v_case, bk.region, 'opened', NULL, p_subject, p_client, v_now);
    END IF;
    v_report := 'DR-' || nextval('fleet.report_seq');
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
        VALUES (p_subject, p_key, 'report_damaged_bike', p_digest, p_client, bk.region,
                bk.bike_id, v_report, v_case, v_status, v_now);
    END IF;
    PERFORM audit_record('report_damaged_bike', p_bike, p_digest, 'ok', NULL, p_request_id,
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

-- bikaroo://cases/{caseId}: the caller's rights, then (when visible) one 'case' row followed by
-- its 'report' and 'event' rows in time order. Visible = in the perimeter (RLS) and, except for
-- fleet_operator (who sees any case of their regions), opened by or reported into by the caller.
CREATE FUNCTION fleet.case_as(p_subject text, p_client text, p_case text)
RETURNS TABLE (out_role text, out_regions text[], out_is_human boolean,
               out_client_may_read boolean, out_client_may_report boolean,
               out_requires_confirmation boolean, kind text, item_id text, at text,
               bike_id text, region text, state text, subject text, client_id text,
               issue text, description text, detail text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    RETURN QUERY
    WITH c AS (
        SELECT cs.* FROM fleet.cases cs
         WHERE cs.case_id = p_case
           AND (a.role = 'fleet_operator' OR cs.opened_by = p_subject
                OR EXISTS (SELECT 1 FROM fleet.damage_reports r
                            WHERE r.case_id = cs.case_id AND r.reported_by = p_subject))
    ), items AS (
        SELECT 0 AS ord, 0::bigint AS seq, 'case'::text AS kind, c.case_id AS item_id,
               c.opened_at AS at, c.bike_id, c.region, c.state, c.opened_by AS subject,
               c.opened_via AS client_id, NULL::text AS issue, NULL::text AS description,
               to_char(c.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS detail
          FROM c
        UNION ALL
        SELECT 1, 0, 'report', r.report_id, r.recorded_at, r.bike_id, r.region, r.status_after,
               r.reported_by, r.reported_via, r.issue, r.description, r.status_before
          FROM fleet.damage_reports r JOIN c ON r.case_id = c.case_id
        UNION ALL
        SELECT 2, e.event_id, 'event', e.event_id::text, e.at, NULL, e.region, NULL,
               e.actor_subject, e.actor_client, e.kind, NULL, e.report_id
          FROM fleet.case_events e JOIN c ON e.case_id = c.case_id
    )
    SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
           a.requires_confirmation, i.kind, i.item_id,
           to_char(i.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           i.bike_id, i.region, i.state, i.subject, i.client_id, i.issue, i.description,
           i.detail
      FROM (SELECT 1) AS one
      LEFT JOIN items i ON true
     ORDER BY i.ord NULLS FIRST, i.at, i.seq, i.item_id;
END
$$;

-- Row-level security on every new table: enabled and forced.
ALTER TABLE fleet.damage_reports ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.damage_reports FORCE ROW LEVEL SECURITY;
CREATE POLICY damage_reports_read ON fleet.damage_reports FOR SELECT
    USING (region = ANY (fleet.current_regions()));
CREATE POLICY damage_reports_write ON fleet.damage_reports FOR INSERT
    WITH CHECK (region = ANY (fleet.current_regions()) AND fleet.current_may_report()
                AND reported_by = fleet.current_subject()
                AND reported_via = fleet.current_client());

ALTER TABLE fleet.case_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.case_events FORCE ROW LEVEL SECURITY;
CREATE POLICY case_events_read ON fleet.case_events FOR SELECT
    USING (region = ANY (fleet.current_regions()));
CREATE POLICY case_events_write ON fleet.case_events FOR INSERT
    WITH CHECK (region = ANY (fleet.current_regions()) AND fleet.current_may_report()
                AND actor_subject = fleet.current_subject()
                AND actor_client = fleet.current_client());

ALTER TABLE fleet.bike_status_history ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.bike_status_history FORCE ROW LEVEL SECURITY;
CREATE POLICY bike_status_history_read ON fleet.bike_status_history FOR SELECT
    USING (region = ANY (fleet.current_regions()));
CREATE POLICY bike_status_history_write ON fleet.bike_status_history FOR INSERT
    WITH CHECK (region = ANY (fleet.current_regions()) AND fleet.current_may_report()
                AND changed_by = fleet.current_subject()
                AND changed_via = fleet.current_client());

ALTER TABLE fleet.idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY idempotency_keys_own ON fleet.idempotency_keys FOR SELECT
    USING (subject = fleet.current_subject());
CREATE POLICY idempotency_keys_write ON fleet.idempotency_keys FOR INSERT
    WITH CHECK (subject = fleet.current_subject() AND client_id = fleet.current_client()
                AND region = ANY (fleet.current_regions()) AND fleet.current_may_report());

ALTER TABLE fleet.audit_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.audit_log FORCE ROW LEVEL SECURITY;

-- Writes to existing tables: a reporter opens cases and changes bikes of their regions only.
CREATE POLICY cases_open ON fleet.cases FOR INSERT
    WITH CHECK (region = ANY (fleet.current_regions()) AND fleet.current_may_report()
                AND opened_by = fleet.current_subject()
                AND opened_via = fleet.current_client());
CREATE POLICY cases_extend ON fleet.cases FOR UPDATE
    USING (region = ANY (fleet.current_regions()) AND fleet.current_may_report())
    WITH CHECK (region = ANY (fleet.current_regions()));
CREATE POLICY bikes_report ON fleet.bikes FOR UPDATE
    USING (region = ANY (fleet.current_regions()) AND fleet.current_may_report())
    WITH CHECK (region = ANY (fleet.current_regions()));

CREATE POLICY owner_all ON fleet.damage_reports TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.case_events TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.bike_status_history TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.idempotency_keys TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.audit_log TO fleet_owner USING (true) WITH CHECK (true);

-- The login role gets exactly what report_damage_as needs: no DELETE anywhere, no UPDATE of
-- history, events, reports or keys, only two columns of cases and two of bikes, and nothing at
-- all on the audit log (audit_record is the way in).
GRANT SELECT, INSERT ON fleet.damage_reports, fleet.case_events, fleet.bike_status_history,
      fleet.idempotency_keys TO fleet_app;
GRANT INSERT ON fleet.cases TO fleet_app;
GRANT UPDATE (report_count, updated_at) ON fleet.cases TO fleet_app;
GRANT UPDATE (status, updated_at) ON fleet.bikes TO fleet_app;
GRANT USAGE ON SEQUENCE fleet.case_seq, fleet.report_seq TO fleet_app;

REVOKE ALL ON FUNCTION fleet.current_may_report() FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet.audit_record(text, text, text, text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet.audit_as(text, text, text, text, text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                              text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet.case_as(text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet.bike_status_audited_as(text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.current_may_report(),
      fleet.audit_record(text, text, text, text, text, text, text),
      fleet.audit_as(text, text, text, text, text, text, text, text),
      fleet.report_damage_as(text, text, text, text, text, text, text, text, text, boolean),
      fleet.case_as(text, text, text),
      fleet.bike_status_audited_as(text, text, text, text, text) TO fleet_app;
