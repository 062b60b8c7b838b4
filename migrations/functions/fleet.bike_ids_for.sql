-- Completion of {bikeId} for one caller and any number of prefixes: per prefix, the bike ids
-- starting with it that the caller may see, in id order, at most 100, each with its region
-- (checked against the perimeter again by the server) and the total number of matches. The
-- prefix is compared literally (starts_with, no LIKE pattern): % and _ match only themselves.
CREATE OR REPLACE FUNCTION fleet.bike_ids_for(p_subject text, p_client text, p_prefixes text[])
RETURNS TABLE (prefix text, bike_id text, region text, total bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    IF fleet.current_subject() IS DISTINCT FROM p_subject
       OR fleet.current_client() IS DISTINCT FROM p_client THEN
        PERFORM fleet.act_as(p_subject, p_client);
    END IF;
    RETURN QUERY
    SELECT p.prefix, m.bike_id, m.region, m.total
      FROM unnest(p_prefixes) AS p(prefix)
     CROSS JOIN LATERAL (
        SELECT b.bike_id, b.region, count(*) OVER () AS total
          FROM fleet.bikes b
         WHERE starts_with(b.bike_id, p.prefix)
         ORDER BY b.bike_id
         LIMIT 100) AS m
     ORDER BY p.prefix, m.bike_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.bike_ids_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.bike_ids_for(text, text, text[]) TO fleet_app;
