-- Bike ids starting with p_prefix that the caller may see (completion of {bikeId}), in id order,
-- at most p_limit of them, each row carrying the total number of matches. Always at least one
-- row: bike_id NULL and total 0 when nothing matches. The prefix is compared literally
-- (starts_with, no LIKE pattern), so % and _ in it match only themselves.
CREATE OR REPLACE FUNCTION fleet.complete_bike_ids_as(p_subject text, p_client text, p_prefix text,
                                                      p_limit integer)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               bike_id text, total bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
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

REVOKE ALL ON FUNCTION fleet.complete_bike_ids_as(text, text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.complete_bike_ids_as(text, text, text, integer) TO fleet_app;
