-- 0004: the business state behind report_damaged_bike (docs/domain.md, docs/security.md):
-- damage reports, investigation cases and their events, bike status history, idempotency
-- records and the audit log. Every table has row-level security enabled and forced; policies
-- only compare rows against the settings fleet.act_as() fixed for the transaction (no per-row
-- lookups, docs/architecture.md), and every write is stamped with the acting subject and
-- client application, which the WITH CHECK clauses hold to those settings.

-- The write policies below call fleet.current_may_report(), so it is declared here, failing
-- closed (nobody may report). Its body, and those of fleet.audit_record(), fleet.audit_as(),
-- fleet.bike_status_audited_as(), fleet.report_damage_as() and fleet.case_as() that this file
-- first created, live in migrations/functions/, applied right after the numbered files.
CREATE FUNCTION fleet.current_may_report() RETURNS boolean LANGUAGE sql AS $$ SELECT false $$;

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
