-- Whether the current transaction's identity may write, as fleet.write_begin decided it for the
-- write's capability (fleet.may_use: its declared roles, people only, the client application's
-- right). The write policies require it: a bug in a function cannot write without the right.
CREATE OR REPLACE FUNCTION fleet.current_may_report() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT coalesce(NULLIF(pg_catalog.current_setting('app.may_report', true), ''), 'off') = 'on' $$;

REVOKE ALL ON FUNCTION fleet.current_may_report() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.current_may_report() TO fleet_app;
