-- Adds a region, or renames it (code like FR-PAR). Audited in fleet.admin_log; owner only.
CREATE OR REPLACE FUNCTION fleet.admin_region(p_code text, p_name text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    INSERT INTO fleet.regions (code, name) VALUES (p_code, p_name)
    ON CONFLICT (code) DO UPDATE SET name = EXCLUDED.name;
    INSERT INTO fleet.admin_log (action, target, detail)
    VALUES ('region', 'region:' || p_code, jsonb_build_object('name', p_name));
    RETURN p_code;
END
$$;

REVOKE ALL ON FUNCTION fleet.admin_region(text, text) FROM PUBLIC;
