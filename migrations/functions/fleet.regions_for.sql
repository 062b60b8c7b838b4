-- The region reference table (bikaroo://fleet/regions) for one caller: every region's code and
-- name, in code order. Reference data: no key, no region of its own (every region is named to
-- everyone who may read, as fleet.regions' policy already lets them).
CREATE OR REPLACE FUNCTION fleet.regions_for(p_subject text, p_client text)
RETURNS TABLE (code text, name text)
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
    IF NOT fleet.may_read('regions') THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT r.code, r.name
      FROM fleet.regions r
     ORDER BY r.code;
END
$$;

REVOKE ALL ON FUNCTION fleet.regions_for(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.regions_for(text, text) TO fleet_app;
