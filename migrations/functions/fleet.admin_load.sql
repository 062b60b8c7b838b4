-- Loads regions, stations or bikes from rows (a JSON array of objects named like the CSV
-- header: regions code,name; stations station_id,region,name; bikes bike_id,region,station_id,
-- status,battery_pct,last_seen_at), all or nothing: a row that exists is updated. Returns the
-- number of rows; one row in fleet.admin_log. Owner only.
-- A row the database refuses (a constraint, a value of the wrong type) fails the whole load
-- with the error of the first row that fails on top of those before it, its table, column and
-- constraint as PostgreSQL named them, and "admin_load row N" (1-based) as its detail: the
-- operator's tool maps that to the file's line and column.
CREATE OR REPLACE FUNCTION fleet.admin_load(p_kind text, p_rows jsonb) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    n bigint;
    r jsonb;
    i bigint;
    e_state text;
    e_message text;
    e_table text;
    e_column text;
    e_constraint text;
BEGIN
    IF jsonb_typeof(p_rows) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'admin_load: rows must be a JSON array' USING ERRCODE = '22023';
    END IF;
    IF p_kind IS NULL OR p_kind NOT IN ('regions', 'stations', 'bikes') THEN
        RAISE EXCEPTION 'admin_load: % is not regions, stations or bikes', p_kind
            USING ERRCODE = '22023';
    END IF;
    BEGIN
        n := fleet.admin_load_rows(p_kind, p_rows);
    EXCEPTION WHEN integrity_constraint_violation OR data_exception THEN
        -- Which row: each again, in order, on top of the ones before it (this block's writes
        -- are gone; the error below takes the rest with it).
        FOR r, i IN SELECT x.e, x.o FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(e, o)
        LOOP
            BEGIN
                PERFORM fleet.admin_load_rows(p_kind, jsonb_build_array(r));
            EXCEPTION WHEN integrity_constraint_violation OR data_exception THEN
                GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
                    e_table = TABLE_NAME, e_column = COLUMN_NAME,
                    e_constraint = CONSTRAINT_NAME;
                RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message,
                    DETAIL = format('admin_load row %s', i), TABLE = e_table,
                    COLUMN = e_column, CONSTRAINT = e_constraint;
            END;
        END LOOP;
        RAISE; -- refused only as a whole: the original error
    END;
    INSERT INTO fleet.admin_log (action, target, detail)
    VALUES ('load', p_kind, jsonb_build_object('rows', n));
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION fleet.admin_load(text, jsonb) FROM PUBLIC;
