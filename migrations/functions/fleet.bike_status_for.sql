-- get_bike_status and bikaroo://fleet/bikes/{bikeId} for one caller and any number of bikes: one
-- row per bike the caller may see (row-level security as that caller), none for the others,
-- with its active case (any step before closed; at most one per bike) and that case's step.
-- The caller's identity is set by fleet.act_as unless the transaction already acts as them (a
-- batch sets each caller once, right before its reads). Plans pinned: generic, planned once
-- per connection (left to auto, PostgreSQL switched plans under mixed callers).
CREATE OR REPLACE FUNCTION fleet.bike_status_for(p_subject text, p_client text, p_bike_ids text[])
RETURNS TABLE (bike_id text, status text, status_label text, region text, station_id text,
               station_name text, battery_pct smallint, last_seen_at text, open_case_id text,
               case_step text)
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
    IF NOT fleet.may_read('bike_status') THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT b.bike_id, b.status, s.label, b.region, b.station_id, st.name, b.battery_pct,
           to_char(b.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           c.case_id, c.state
      FROM fleet.bikes b
      LEFT JOIN fleet.status_codes s ON s.code = b.status
      LEFT JOIN fleet.stations st ON st.station_id = b.station_id
      LEFT JOIN fleet.cases c ON c.bike_id = b.bike_id AND c.state <> 'closed'
     WHERE b.bike_id = ANY (p_bike_ids)
     ORDER BY b.bike_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.bike_status_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.bike_status_for(text, text, text[]) TO fleet_app;
