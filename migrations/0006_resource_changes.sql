-- 0006: a change feed for resource subscriptions. Every committed change to what a resource
-- shows sends NOTIFY bikaroo_resources with that resource's URI (delivered at commit, folded
-- when repeated within one transaction). The server LISTENs only while a client holds a
-- subscription, and tells only that client, only about URIs it subscribed to after reading
-- them under its own perimeter.

CREATE FUNCTION fleet.notify_resource_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet
AS $$
BEGIN
    IF TG_TABLE_NAME = 'bikes' THEN
        PERFORM pg_notify('bikaroo_resources', 'bikaroo://fleet/bikes/' || NEW.bike_id);
    ELSIF TG_TABLE_NAME = 'cases' THEN
        -- A case's reports and events are counted on its row; a bike shows its open case.
        PERFORM pg_notify('bikaroo_resources', 'bikaroo://cases/' || NEW.case_id);
        PERFORM pg_notify('bikaroo_resources', 'bikaroo://fleet/bikes/' || NEW.bike_id);
    ELSIF TG_TABLE_NAME = 'case_events' THEN
        PERFORM pg_notify('bikaroo_resources', 'bikaroo://cases/' || NEW.case_id);
    ELSE
        PERFORM pg_notify('bikaroo_resources', 'bikaroo://fleet/status-codes');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER bikes_resource_change AFTER UPDATE ON fleet.bikes
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*)
    EXECUTE FUNCTION fleet.notify_resource_change();
CREATE TRIGGER cases_resource_change AFTER INSERT OR UPDATE ON fleet.cases
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_resource_change();
CREATE TRIGGER case_events_resource_change AFTER INSERT ON fleet.case_events
    FOR EACH ROW EXECUTE FUNCTION fleet.notify_resource_change();
CREATE TRIGGER status_codes_resource_change AFTER INSERT OR UPDATE OR DELETE ON fleet.status_codes
    FOR EACH STATEMENT EXECUTE FUNCTION fleet.notify_resource_change();
