-- The status-code reference table (bikaroo://fleet/status-codes) for one caller, in display
-- order. Reference data: no key, no region.
CREATE OR REPLACE FUNCTION fleet.status_codes_for(p_subject text, p_client text)
RETURNS TABLE (code text, label text, description text, rentable boolean)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    IF fleet.current_subject() IS DISTINCT FROM p_subject
       OR fleet.current_client() IS DISTINCT FROM p_client THEN
        PERFORM fleet.act_as(p_subject, p_client);
    END IF;
    -- A role the capability's declaration does not list reads nothing (a setting act_as fixed).
    IF NOT fleet.may_read('status_codes') THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT s.code, s.label, s.description, s.rentable
      FROM fleet.status_codes s
     ORDER BY s.sort_order;
END
$$;

REVOKE ALL ON FUNCTION fleet.status_codes_for(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.status_codes_for(text, text) TO fleet_app;
