-- The writes of fleet.admin_load for p_rows (regions, stations or bikes by p_kind, the rows
-- named like the CSV header): a row that exists is updated. Returns the number of rows. No
-- check and no log row of its own: fleet.admin_load calls it for the whole file and, when that
-- fails, row by row to name the row. Owner only.
CREATE OR REPLACE FUNCTION fleet.admin_load_rows(p_kind text, p_rows jsonb) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF p_kind = 'regions' THEN
        INSERT INTO fleet.regions (code, name)
        SELECT r.code, r.name FROM jsonb_to_recordset(p_rows) AS r(code text, name text)
        ON CONFLICT (code) DO UPDATE SET name = EXCLUDED.name;
    ELSIF p_kind = 'stations' THEN
        INSERT INTO fleet.stations (station_id, region, name)
        SELECT r.station_id, r.region, r.name
          FROM jsonb_to_recordset(p_rows) AS r(station_id text, region text, name text)
        ON CONFLICT (station_id) DO UPDATE SET region = EXCLUDED.region, name = EXCLUDED.name;
    ELSIF p_kind = 'bikes' THEN
        INSERT INTO fleet.bikes (bike_id, region, station_id, status, battery_pct, last_seen_at)
        SELECT r.bike_id, r.region, NULLIF(r.station_id, ''), r.status,
               NULLIF(r.battery_pct, '')::smallint, r.last_seen_at::timestamptz
          FROM jsonb_to_recordset(p_rows)
               AS r(bike_id text, region text, station_id text, status text, battery_pct text,
                    last_seen_at text)
        ON CONFLICT (bike_id) DO UPDATE
           SET region = EXCLUDED.region, station_id = EXCLUDED.station_id,
               status = EXCLUDED.status, battery_pct = EXCLUDED.battery_pct,
               last_seen_at = EXCLUDED.last_seen_at, updated_at = now();
    ELSE
        RAISE EXCEPTION 'admin_load: % is not regions, stations or bikes', p_kind
            USING ERRCODE = '22023';
    END IF;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION fleet.admin_load_rows(text, jsonb) FROM PUBLIC;
