-- 0003: reads behind the MCP protocol layer (resources and completion), each one round trip that
-- first fixes the acting identity with fleet.act_as() and then reads under row-level security,
-- following fleet.bike_status_as() of 0002. Columns 0..5 are always the caller's rights.

-- The status-code reference table (resource bikaroo://fleet/status-codes), in display order.
-- Always at least one row: the rights, then one row per code (code NULL when nothing is readable).
CREATE FUNCTION fleet.status_codes_as(p_subject text, p_client text)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               code text, label text, description text, rentable boolean)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
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

-- Bike ids starting with p_prefix that the caller may see (completion of {bikeId}), in id order,
-- at most p_limit of them, each row carrying the total number of matches. Always at least one
-- row: bike_id NULL and total 0 when nothing matches. The prefix is compared literally
-- (starts_with, no LIKE pattern), so % and _ in it match only themselves.
CREATE FUNCTION fleet.complete_bike_ids_as(p_subject text, p_client text, p_prefix text,
                                           p_limit integer)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               bike_id text, total bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    RETURN QUERY
    WITH matches AS (
        SELECT b.bike_id, count(*) OVER () AS total
          FROM fleet.bikes b
         WHERE starts_with(b.bike_id, coalesce(p_prefix, ''))
         ORDER BY b.bike_id
         LIMIT greatest(least(coalesce(p_limit, 100), 100), 1)
    )
    SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
           a.requires_confirmation, m.bike_id, coalesce(m.total, 0)
      FROM (SELECT 1) AS one
      LEFT JOIN matches m ON true
     ORDER BY m.bike_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.status_codes_as(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet.complete_bike_ids_as(text, text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.status_codes_as(text, text),
      fleet.complete_bike_ids_as(text, text, text, integer) TO fleet_app;
