-- 0003: what kind of database this is, written only by its owner. The server reads
-- 'environment' to decide whether a stdio session may act as a configured local identity
-- without a token: only when it is 'development' (the demo data sets it; production never does).
CREATE TABLE fleet.settings (
    name  text PRIMARY KEY CHECK (name ~ '^[a-z_]{1,64}$'),
    value text NOT NULL
);
ALTER TABLE fleet.settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.settings FORCE ROW LEVEL SECURITY;
CREATE POLICY settings_read ON fleet.settings FOR SELECT USING (true);
CREATE POLICY owner_all ON fleet.settings TO fleet_owner USING (true) WITH CHECK (true);
GRANT SELECT ON fleet.settings TO fleet_app;
