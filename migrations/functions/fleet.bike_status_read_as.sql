-- get_bike_status's read in one round trip, for audit by group commit (0008): the identity,
-- then the read under RLS, like fleet.bike_status_as(). A denial (unknown or inactive subject
-- or client, a client that may not read) writes its audit row here, in this transaction; an
-- allowed read's row (ok or not_found) is the server's to write in the next audit batch
-- (fleet.audit_batch), and its answer waits for that batch's commit.
-- Always returns one row: the caller's rights, and the bike's columns (NULL when not visible).
CREATE OR REPLACE FUNCTION fleet.bike_status_read_as(p_subject text, p_client text, p_bike text,
                                                     p_digest text, p_request_id text)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               bike_id text, status text, status_label text, region text, station_id text,
               battery_pct smallint, last_seen_at text, open_case_id text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    a fleet.acting := fleet.act_as(p_subject, p_client);
BEGIN
    IF a.role IS NULL OR NOT a.client_may_read THEN
        PERFORM fleet.audit_record('get_bike_status', p_bike, p_digest, 'denied', NULL,
                                   p_request_id, NULL);
        RETURN QUERY
        SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
               a.requires_confirmation, NULL::text, NULL::text, NULL::text, NULL::text,
               NULL::text, NULL::smallint, NULL::text, NULL::text;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
           a.requires_confirmation,
           b.bike_id, b.status, s.label, b.region, b.station_id, b.battery_pct,
           to_char(b.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           c.case_id
      FROM (SELECT 1) AS one
      LEFT JOIN fleet.bikes b ON b.bike_id = p_bike
      LEFT JOIN fleet.status_codes s ON s.code = b.status
      LEFT JOIN fleet.cases c ON c.bike_id = b.bike_id AND c.state <> 'closed';
END
$$;

REVOKE ALL ON FUNCTION fleet.bike_status_read_as(text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.bike_status_read_as(text, text, text, text, text) TO fleet_app;
