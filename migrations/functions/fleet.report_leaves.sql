-- What a damage report does to its bike's status, decided here only: a bike in repair, lost or
-- retired keeps its status, any other becomes unavailable. fleet.report_damaged_bike_as files
-- reports by it and says it in its confirmation's question; fleet.report_damage_as (the previous
-- releases' form) answers with it too.
CREATE OR REPLACE FUNCTION fleet.report_leaves(p_status text) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN p_status IN ('in_repair', 'lost', 'retired') THEN p_status
                ELSE 'unavailable' END
$$;

REVOKE ALL ON FUNCTION fleet.report_leaves(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_leaves(text) TO fleet_app;
