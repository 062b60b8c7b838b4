-- The acting subject of the current transaction, as fixed by act_as (NULL outside one).
CREATE OR REPLACE FUNCTION fleet.current_subject() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(pg_catalog.current_setting('app.subject', true), '') $$;

GRANT EXECUTE ON FUNCTION fleet.current_subject() TO fleet_app;
