-- The change feed for subscriptions (triggers in 0006): every committed change to what an entity
-- shows sends NOTIFY bikaroo_changes with that entity's key, 'bike:<bike_id>', 'case:<case_id>'
-- or 'status_codes' (delivered at commit, folded when repeated within one transaction). Entity
-- keys, not MCP URIs: the database names business things; the server maps them to its resources.
CREATE OR REPLACE FUNCTION fleet.notify_resource_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    IF TG_TABLE_NAME = 'bikes' THEN
        PERFORM pg_notify('bikaroo_changes', 'bike:' || NEW.bike_id);
    ELSIF TG_TABLE_NAME = 'cases' THEN
        -- A case's reports and events are counted on its row; a bike shows its open case.
        PERFORM pg_notify('bikaroo_changes', 'case:' || NEW.case_id);
        PERFORM pg_notify('bikaroo_changes', 'bike:' || NEW.bike_id);
    ELSIF TG_TABLE_NAME = 'case_events' THEN
        PERFORM pg_notify('bikaroo_changes', 'case:' || NEW.case_id);
    ELSE
        PERFORM pg_notify('bikaroo_changes', 'status_codes');
    END IF;
    RETURN NULL;
END
$$;
