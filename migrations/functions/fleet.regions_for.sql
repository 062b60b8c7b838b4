-- The region reference table (bikaroo://fleet/regions): every region's code and name, in code
-- order. Reference data: no key, no region of its own (every region is named to everyone who may
-- read, as fleet.regions' policy already lets them). Plain SQL, inlined into the statement that
-- calls it; who may use the capability is judged by that statement (fleet.bike_status_for says
-- how).
CREATE OR REPLACE FUNCTION fleet.regions_for()
RETURNS TABLE (code text, name text)
LANGUAGE sql STABLE
AS $$
    SELECT r.code, r.name
      FROM fleet.regions r
     ORDER BY r.code
$$;

REVOKE ALL ON FUNCTION fleet.regions_for() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.regions_for() TO fleet_app;
