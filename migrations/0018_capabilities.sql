-- 0018: capabilities declared as data, and one write pattern for every write (migrations/README.md,
-- "A write function").
--
-- 1. fleet.capabilities: per capability, the roles that may use it, the OAuth scope (and so the
--    client application's right) it needs, whether only people may use it, and its confirmation
--    policy. `bikaroo-mcp migrate` fills it from the declarations the binary was built with, after
--    the function files, and deletes the rows of capabilities no longer declared: never by hand.
--    fleet.may_use() judges a caller against a row; fleet.act_as() keeps the names of what the
--    caller may use for the transaction, and the read functions answer nothing to a caller whose
--    role their capability does not list. A change of a row is a change of rights: the triggers
--    bump the rights epoch (0008), so no cached rights outlive it.
CREATE TABLE fleet.capabilities (
    name         text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$'),
    roles        text[] NOT NULL CHECK (array_position(roles, NULL) IS NULL),
    scope        text NOT NULL CHECK (scope IN ('fleet:read', 'fleet:report')),
    people_only  boolean NOT NULL,
    confirmation text NOT NULL CHECK (confirmation IN ('never', 'always', 'client', 'condition'))
);
ALTER TABLE fleet.capabilities ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.capabilities FORCE ROW LEVEL SECURITY;
CREATE POLICY capabilities_read ON fleet.capabilities FOR SELECT USING (true);
CREATE POLICY owner_all ON fleet.capabilities TO fleet_owner USING (true) WITH CHECK (true);
GRANT SELECT ON fleet.capabilities TO fleet_app;
CREATE TRIGGER capabilities_rights_change AFTER INSERT OR UPDATE OR DELETE ON fleet.capabilities
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_rights_change('capability', 'name');
CREATE TRIGGER capabilities_rights_truncate AFTER TRUNCATE ON fleet.capabilities
    FOR EACH STATEMENT EXECUTE FUNCTION fleet.notify_rights_change('capability', 'name');

-- 2. Idempotency for any write: the first call's result under (subject, key), with its tool and
--    a digest of its arguments (fleet.idempotency_claim, fleet.idempotency_keep). As with
--    fleet.idempotency_keys, a key belongs to the subject that chose it, so keys of different
--    subjects never collide, and only a caller with the write right, in its perimeter, records
--    one.
CREATE TABLE fleet.idempotent_calls (
    subject     text NOT NULL,
    idem_key    text NOT NULL CHECK (length(idem_key) BETWEEN 1 AND 255),
    tool        text NOT NULL,
    args_digest text NOT NULL CHECK (args_digest ~ '^[0-9a-f]{64}$'),
    client_id   text NOT NULL,
    region      text NOT NULL REFERENCES fleet.regions(code),
    result      jsonb NOT NULL CHECK (jsonb_typeof(result) = 'object'),
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (subject, idem_key)
);
ALTER TABLE fleet.idempotent_calls ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.idempotent_calls FORCE ROW LEVEL SECURITY;
CREATE POLICY idempotent_calls_own ON fleet.idempotent_calls FOR SELECT
    USING (subject = fleet.current_subject());
CREATE POLICY idempotent_calls_write ON fleet.idempotent_calls FOR INSERT
    WITH CHECK (subject = fleet.current_subject() AND client_id = fleet.current_client()
                AND region = ANY (fleet.current_regions()) AND fleet.current_may_report());
CREATE POLICY owner_all ON fleet.idempotent_calls TO fleet_owner USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON fleet.idempotent_calls TO fleet_app;

-- The keys of reports filed before this release replay after it: each row of
-- fleet.idempotency_keys becomes a row here whose result holds the report's output columns as
-- fleet.report_damaged_bike_as names them. fleet.idempotency_keys is kept with its rows and no
-- longer written once migrate has applied this release's function files; a key the previous
-- text records between this file and them (a rolling upgrade serves reports all along) is read
-- there by fleet.idempotency_claim. A later release drops the table and that look-up.
INSERT INTO fleet.idempotent_calls (subject, idem_key, tool, args_digest, client_id, region,
                                    result, recorded_at)
SELECT k.subject, k.idem_key, k.tool, k.args_digest, k.client_id, k.region,
       jsonb_build_object('bike_id', k.bike_id, 'status', k.status, 'report_id', k.report_id,
                          'case_id', k.case_id,
                          'recorded_at', to_char(k.recorded_at AT TIME ZONE 'UTC',
                                                 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
       k.recorded_at
  FROM fleet.idempotency_keys k
ON CONFLICT (subject, idem_key) DO NOTHING;

-- 3. A read neither this release nor the previous one calls (fleet.bike_ids_for replaced it):
--    removed, with its record, as migrations/README.md "Removing a function" says. The other
--    reads before fleet.*_for (bike_status_as, bike_status_read_as, case_as,
--    complete_bike_ids_as, status_codes_as, and audit_batch) stay for now: this release calls
--    none of them, but the previous one does, and serves on this schema during a rolling
--    upgrade (expand, then contract: tests/upgrade). The release after drops them.
DROP FUNCTION IF EXISTS fleet.bike_ids_as(text, text, text, integer);
DELETE FROM fleet_meta.schema_functions WHERE name = 'fleet.bike_ids_as.sql';
