-- The change feed for resource subscriptions (triggers in 0006): every committed change to what
-- a resource shows sends NOTIFY bikaroo_resources with that resource's URI (delivered at commit,
-- folded when repeated within one transaction).
CREATE OR REPLACE FUNCTION fleet.notify_resource_change() RETURNS trigger
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
