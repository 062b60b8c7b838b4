-- The acting client application of the current transaction, as fixed by act_as (NULL outside
-- one).
CREATE OR REPLACE FUNCTION fleet.current_client() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(pg_catalog.current_setting('app.client', true), '') $$;

GRANT EXECUTE ON FUNCTION fleet.current_client() TO fleet_app;
