-- The status-code reference table (resource bikaroo://fleet/status-codes), in display order.
-- Always at least one row: the rights, then one row per code (code NULL when nothing is readable).
CREATE OR REPLACE FUNCTION fleet.status_codes_as(p_subject text, p_client text)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               code text, label text, description text, rentable boolean)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    RETURN QUERY
    SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
           a.requires_confirmation, s.code, s.label, s.description, s.rentable
      FROM (SELECT 1) AS one
      LEFT JOIN fleet.status_codes s ON true
     ORDER BY s.sort_order;
END
$$;

REVOKE ALL ON FUNCTION fleet.status_codes_as(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.status_codes_as(text, text) TO fleet_app;
