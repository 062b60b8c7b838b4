-- get_bike_status and bikaroo://fleet/bikes/{bikeId}: one row per bike of p_bike_ids that the
-- transaction's identity may see (row-level security), none for the others, with its active
-- case (any step before closed; at most one per bike) and that case's step.
-- A read function is plain SQL that PostgreSQL inlines into the statement calling it (no SET
-- clause, not SECURITY DEFINER, STABLE): the identity is the transaction's, set by
-- fleet.act_as, and who may use the capability is judged by the statement (domain/reads.c), once
-- per caller. Without an identity it returns nothing.
CREATE OR REPLACE FUNCTION fleet.bike_status_for(p_bike_ids text[])
RETURNS TABLE (bike_id text, status text, status_label text, region text, station_id text,
               station_name text, battery_pct smallint, last_seen_at text, open_case_id text,
               case_step text)
LANGUAGE sql STABLE
AS $$
    SELECT b.bike_id, b.status, s.label, b.region, b.station_id, st.name, b.battery_pct,
           to_char(b.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           c.case_id, c.state
      FROM fleet.bikes b
      LEFT JOIN fleet.status_codes s ON s.code = b.status
      LEFT JOIN fleet.stations st ON st.station_id = b.station_id
      LEFT JOIN fleet.cases c ON c.bike_id = b.bike_id AND c.state <> 'closed'
     WHERE b.bike_id = ANY (p_bike_ids)
     ORDER BY b.bike_id
$$;

REVOKE ALL ON FUNCTION fleet.bike_status_for(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.bike_status_for(text[]) TO fleet_app;
