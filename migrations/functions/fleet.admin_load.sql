-- Loads regions, stations or bikes from rows (a JSON array of objects named like the CSV
-- header: regions code,name; stations station_id,region,name; bikes bike_id,region,station_id,
-- status,battery_pct,last_seen_at), all or nothing: a row that exists is updated. Returns the
-- number of rows; one row in fleet.admin_log. Owner only.
CREATE OR REPLACE FUNCTION fleet.admin_load(p_kind text, p_rows jsonb) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    n bigint;
BEGIN
    IF jsonb_typeof(p_rows) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'admin_load: rows must be a JSON array' USING ERRCODE = '22023';
    END IF;
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
    INSERT INTO fleet.admin_log (action, target, detail)
    VALUES ('load', p_kind, jsonb_build_object('rows', n));
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION fleet.admin_load(text, jsonb) FROM PUBLIC;
