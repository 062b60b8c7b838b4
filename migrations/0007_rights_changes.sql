-- 0007: a caller's rights changing ends what it subscribed to. A subscription checks that its
-- resources are readable when it is taken (0006), under the caller's perimeter of that moment.
-- When a principal (role, activity, regions) or a client application changes, NOTIFY
-- bikaroo_rights names whose rights changed, 'subject:<subject>' or 'client:<client_id>', at
-- commit; the server ends that caller's subscriptions (a 2026-07-28 listen gets its result and
-- is taken again, checked anew; 2025-era subscriptions are dropped), so nobody goes on hearing
-- about resources outside a perimeter they no longer have.

-- The triggers below need their function to exist: declared here, doing nothing. Its body
-- (TG_ARGV: the kind named, 'subject' or 'client', and the column that holds it) lives in
-- migrations/functions/fleet.notify_rights_change.sql, applied right after the numbered files.
CREATE FUNCTION fleet.notify_rights_change() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;

CREATE TRIGGER principals_rights_change AFTER UPDATE OR DELETE ON fleet.principals
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_rights_change('subject', 'subject');
CREATE TRIGGER principal_regions_rights_change AFTER INSERT OR UPDATE OR DELETE
    ON fleet.principal_regions
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_rights_change('subject', 'subject');
CREATE TRIGGER client_apps_rights_change AFTER UPDATE OR DELETE ON fleet.client_apps
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_rights_change('client', 'client_id');
