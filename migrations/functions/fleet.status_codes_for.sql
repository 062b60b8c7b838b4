-- The status-code reference table (bikaroo://fleet/status-codes), in display order. Reference
-- data: no key, no region. Plain SQL, inlined into the statement that calls it; who may use the
-- capability is judged by that statement (fleet.bike_status_for says how).
CREATE OR REPLACE FUNCTION fleet.status_codes_for()
RETURNS TABLE (code text, label text, description text, rentable boolean)
LANGUAGE sql STABLE
AS $$
    SELECT s.code, s.label, s.description, s.rentable
      FROM fleet.status_codes s
     ORDER BY s.sort_order
$$;

REVOKE ALL ON FUNCTION fleet.status_codes_for() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.status_codes_for() TO fleet_app;
