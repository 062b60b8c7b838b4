-- The acting identity's role in the fleet (viewer, customer_care, ...) of the current
-- transaction, as fixed by act_as (NULL outside one, or for a caller without rights).
CREATE OR REPLACE FUNCTION fleet.current_fleet_role() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(pg_catalog.current_setting('app.role', true), '') $$;

REVOKE ALL ON FUNCTION fleet.current_fleet_role() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.current_fleet_role() TO fleet_app;
