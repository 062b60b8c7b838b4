-- Whether the current transaction's identity may use a capability, as fleet.act_as found it
-- (fleet.may_use for every row of fleet.capabilities, kept in app.may_use as a comma list of
-- names): one read of a setting, judged once per caller by the server's statement of a read
-- (domain/reads.c). No identity: false.
CREATE OR REPLACE FUNCTION fleet.may_read(p_capability text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT (p_capability = ANY (pg_catalog.string_to_array(
                pg_catalog.current_setting('app.may_use', true), ','))) IS TRUE
$$;

REVOKE ALL ON FUNCTION fleet.may_read(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.may_read(text) TO fleet_app;
