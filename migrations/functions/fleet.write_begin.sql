-- A write function's first line: acts as the caller (fleet.act_as) and fixes, for the rest of the
-- transaction, whether they may write with this capability (fleet.may_use): app.may_report 'on'
-- or ''. The write policies require it (fleet.current_may_report()), so a bug in a write
-- function cannot write what the capability's roles, people-only rule and client right refuse.
-- Returns the caller's rights; the caller tests fleet.current_may_report().
CREATE OR REPLACE FUNCTION fleet.write_begin(p_capability text, p_subject text, p_client text)
RETURNS fleet.acting
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    PERFORM set_config('app.may_report',
                       CASE WHEN fleet.may_use(p_capability, a) THEN 'on' ELSE '' END, true);
    RETURN a;
END
$$;

REVOKE ALL ON FUNCTION fleet.write_begin(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.write_begin(text, text, text) TO fleet_app;
