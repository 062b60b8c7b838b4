-- get_bike_status in one round trip: the identity, then the read under RLS.
-- Always returns one row: the caller's rights, and the bike's columns (NULL when not visible).
CREATE OR REPLACE FUNCTION fleet.bike_status_as(p_subject text, p_client text, p_bike text)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               bike_id text, status text, status_label text, region text, station_id text,
               station_name text, battery_pct smallint, last_seen_at text, open_case_id text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    RETURN QUERY
    SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
           a.requires_confirmation,
           b.bike_id, b.status, s.label, b.region, b.station_id, st.name, b.battery_pct,
           to_char(b.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           c.case_id
      FROM (SELECT 1) AS one
      LEFT JOIN fleet.bikes b ON b.bike_id = p_bike
      LEFT JOIN fleet.status_codes s ON s.code = b.status
      LEFT JOIN fleet.stations st ON st.station_id = b.station_id
      LEFT JOIN fleet.cases c ON c.bike_id = b.bike_id AND c.state <> 'closed';
END
$$;

REVOKE ALL ON FUNCTION fleet.bike_status_as(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.bike_status_as(text, text, text) TO fleet_app;
