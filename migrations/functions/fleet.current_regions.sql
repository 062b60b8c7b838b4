-- The perimeter of the current transaction, as fixed by act_as (NULL outside one).
CREATE OR REPLACE FUNCTION fleet.current_regions() RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT pg_catalog.string_to_array(NULLIF(pg_catalog.current_setting('app.regions', true), ''), ',') $$;

GRANT EXECUTE ON FUNCTION fleet.current_regions() TO fleet_app;
