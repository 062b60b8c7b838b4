-- Whether the current transaction's identity may report damage, as report_damage_as decided it
-- (role customer_care or fleet_operator, human subject, client application allowed to report).
-- The write policies below require it: a bug in a function cannot write without the right.
CREATE OR REPLACE FUNCTION fleet.current_may_report() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT coalesce(NULLIF(pg_catalog.current_setting('app.may_report', true), ''), 'off') = 'on' $$;

REVOKE ALL ON FUNCTION fleet.current_may_report() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.current_may_report() TO fleet_app;
