-- Completion of {bikeId}, for any number of prefixes: per prefix, the bike ids starting with it
-- that the transaction's identity may see, in id order, at most 100, each with its region
-- (checked against the perimeter again by the server) and the total number of matches. The
-- prefix is compared literally (starts_with, no LIKE pattern): % and _ match only themselves.
-- Plain SQL, inlined into the statement that calls it (fleet.bike_status_for says how).
CREATE OR REPLACE FUNCTION fleet.bike_ids_for(p_prefixes text[])
RETURNS TABLE (prefix text, bike_id text, region text, total bigint)
LANGUAGE sql STABLE
AS $$
    SELECT p.prefix, m.bike_id, m.region, m.total
      FROM unnest(p_prefixes) AS p(prefix)
     CROSS JOIN LATERAL (
        SELECT b.bike_id, b.region, count(*) OVER () AS total
          FROM fleet.bikes b
         WHERE starts_with(b.bike_id, p.prefix)
         ORDER BY b.bike_id
         LIMIT 100) AS m
     ORDER BY p.prefix, m.bike_id
$$;

REVOKE ALL ON FUNCTION fleet.bike_ids_for(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.bike_ids_for(text[]) TO fleet_app;
