-- 0013: onboarding and day-two changes by an operator (bikaroo-mcp admin, docs/operating.md):
-- the fleet.admin_* functions of migrations/functions/ load regions, stations and bikes, add and
-- deactivate principals and client applications; each call leaves a row here. They run as the
-- owner role (BIKAROO_MIGRATE_URL); the server's login role may neither call them (EXECUTE is
-- revoked from PUBLIC in each function file) nor read or write this table.
CREATE TABLE fleet.admin_log (
    admin_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    actor    text NOT NULL DEFAULT session_user,  -- the database role that made the change
    action   text NOT NULL CHECK (action ~ '^[a-z_]{1,40}$'),
    target   text NOT NULL,
    detail   jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX admin_log_target_idx ON fleet.admin_log (target, at);

ALTER TABLE fleet.admin_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.admin_log FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON fleet.admin_log TO fleet_owner USING (true) WITH CHECK (true);
