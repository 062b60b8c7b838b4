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
