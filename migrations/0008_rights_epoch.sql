-- 0008: rights at the cost of a probe (issue "Hot path at the database's own pace",
-- docs/architecture.md). fleet.act_as() resolves a caller's rights (three lookups under
-- RLS) once per backend connection and (subject, client), and keeps them in a session setting
-- tagged with the rights epoch they were read at. Every later call checks the tag against this
-- one-row table (one primary-key probe) and resolves again when it differs. The triggers of
-- 0007 bump the epoch in the transaction that changes rights, so the change and the new epoch
-- commit together: a committed change is seen by the very next call on every connection of
-- every instance, and a cached entry of any other epoch (stale or forged) is never used.

CREATE TABLE fleet.rights_epoch (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    epoch bigint NOT NULL
);
INSERT INTO fleet.rights_epoch (one, epoch) VALUES (true, 1);

ALTER TABLE fleet.rights_epoch ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.rights_epoch FORCE ROW LEVEL SECURITY;
CREATE POLICY rights_epoch_read ON fleet.rights_epoch FOR SELECT USING (true);
CREATE POLICY owner_all ON fleet.rights_epoch TO fleet_owner USING (true) WITH CHECK (true);
GRANT SELECT ON fleet.rights_epoch TO fleet_app;

-- A new principal or client application changes rights too (an entry cached as "unknown"
-- must not outlive it): 0007's triggers now fire on INSERT as well, and TRUNCATE bumps the
-- epoch (fleet.notify_rights_change() knows a statement-level call).
DROP TRIGGER principals_rights_change ON fleet.principals;
CREATE TRIGGER principals_rights_change AFTER INSERT OR UPDATE OR DELETE ON fleet.principals
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_rights_change('subject', 'subject');
DROP TRIGGER client_apps_rights_change ON fleet.client_apps;
CREATE TRIGGER client_apps_rights_change AFTER INSERT OR UPDATE OR DELETE ON fleet.client_apps
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_rights_change('client', 'client_id');
CREATE TRIGGER principals_rights_truncate AFTER TRUNCATE ON fleet.principals
    FOR EACH STATEMENT EXECUTE FUNCTION fleet.notify_rights_change('subject', 'subject');
CREATE TRIGGER principal_regions_rights_truncate AFTER TRUNCATE ON fleet.principal_regions
    FOR EACH STATEMENT EXECUTE FUNCTION fleet.notify_rights_change('subject', 'subject');
CREATE TRIGGER client_apps_rights_truncate AFTER TRUNCATE ON fleet.client_apps
    FOR EACH STATEMENT EXECUTE FUNCTION fleet.notify_rights_change('client', 'client_id');
