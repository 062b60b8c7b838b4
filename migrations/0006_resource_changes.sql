-- 0006: a change feed for resource subscriptions. Every committed change to what a resource
-- shows sends a NOTIFY at commit (folded when repeated within one transaction). The server
-- LISTENs only while a client holds a subscription, and tells only that client, only about
-- resources it subscribed to after reading them under its own perimeter. (First NOTIFY
-- bikaroo_resources with MCP URIs; today NOTIFY bikaroo_changes with entity keys such as
-- bike:VL-2048: see functions/fleet.notify_resource_change.sql.)

-- The triggers below need their function to exist: declared here, doing nothing. Its body lives
-- in migrations/functions/fleet.notify_resource_change.sql, applied right after the numbered
-- files (migrations/README.md).
CREATE FUNCTION fleet.notify_resource_change() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;

CREATE TRIGGER bikes_resource_change AFTER UPDATE ON fleet.bikes
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*)
    EXECUTE FUNCTION fleet.notify_resource_change();
CREATE TRIGGER cases_resource_change AFTER INSERT OR UPDATE ON fleet.cases
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_resource_change();
CREATE TRIGGER case_events_resource_change AFTER INSERT ON fleet.case_events
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_resource_change();
CREATE TRIGGER status_codes_resource_change AFTER INSERT OR UPDATE OR DELETE ON fleet.status_codes
    FOR EACH STATEMENT EXECUTE FUNCTION fleet.notify_resource_change();
