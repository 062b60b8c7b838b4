-- 0002: the acting identity and row-level security (SECURITY.md section 4).
-- Every request's work runs in one transaction that starts with fleet.act_as(subject, client):
-- it fixes the identity and the perimeter once, transaction-locally; the policies below only
-- compare rows against those settings (no per-row lookups, see ARCHITECTURE.md section 8).

-- What the caller may do, as the business database sees it. Empty perimeter = nothing visible.
CREATE TYPE fleet.acting AS (
    subject               text,
    client_id             text,
    role                  text,
    regions               text[],
    is_human              boolean,
    client_may_read       boolean,
    client_may_report     boolean,
    requires_confirmation boolean
);

-- The perimeter of the current transaction, as fixed by act_as (NULL outside one).
CREATE FUNCTION fleet.current_regions() RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT pg_catalog.string_to_array(NULLIF(pg_catalog.current_setting('app.regions', true), ''), ',') $$;

CREATE FUNCTION fleet.current_subject() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(pg_catalog.current_setting('app.subject', true), '') $$;

CREATE FUNCTION fleet.current_client() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(pg_catalog.current_setting('app.client', true), '') $$;

-- Sets the acting identity for the rest of the current transaction and returns its rights.
-- An unknown or inactive subject or client gets an empty perimeter and no rights.
CREATE FUNCTION fleet.act_as(p_subject text, p_client text) RETURNS fleet.acting
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    a fleet.acting;
BEGIN
    -- Clear any earlier identity first: the lookups below run under RLS as the new subject.
    PERFORM set_config('app.regions', '', true);
    PERFORM set_config('app.subject', coalesce(p_subject, ''), true);
    PERFORM set_config('app.client', coalesce(p_client, ''), true);
    a.subject := p_subject;
    a.client_id := p_client;
    SELECT p.role, p.is_human,
           coalesce((SELECT array_agg(r.region ORDER BY r.region)
                       FROM principal_regions r WHERE r.subject = p.subject), '{}')
      INTO a.role, a.is_human, a.regions
      FROM principals p
     WHERE p.subject = p_subject AND p.active;
    SELECT c.may_read, c.may_report, c.requires_confirmation
      INTO a.client_may_read, a.client_may_report, a.requires_confirmation
      FROM client_apps c
     WHERE c.client_id = p_client AND c.active;
    IF a.role IS NULL OR a.client_may_read IS NULL THEN
        a.role := NULL;
        a.regions := '{}';
        a.is_human := false;
        a.client_may_read := false;
        a.client_may_report := false;
        a.requires_confirmation := false;
    END IF;
    PERFORM set_config('app.regions', array_to_string(a.regions, ','), true);
    RETURN a;
END
$$;

-- get_bike_status in one round trip: the identity, then the read under RLS.
-- Always returns one row: the caller's rights, and the bike's columns (NULL when not visible).
CREATE FUNCTION fleet.bike_status_as(p_subject text, p_client text, p_bike text)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               bike_id text, status text, status_label text, region text, station_id text,
               station_name text, battery_pct smallint, last_seen_at text, open_case_id text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
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
      LEFT JOIN fleet.cases c ON c.bike_id = b.bike_id AND c.state = 'open';
END
$$;

-- Row-level security: enabled and forced everywhere (the owner is not exempt either).
ALTER TABLE fleet.regions ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.regions FORCE ROW LEVEL SECURITY;
CREATE POLICY regions_read ON fleet.regions FOR SELECT USING (true);

ALTER TABLE fleet.status_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.status_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY status_codes_read ON fleet.status_codes FOR SELECT USING (true);

ALTER TABLE fleet.stations ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.stations FORCE ROW LEVEL SECURITY;
CREATE POLICY stations_perimeter ON fleet.stations FOR SELECT
    USING (region = ANY (fleet.current_regions()));

ALTER TABLE fleet.bikes ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.bikes FORCE ROW LEVEL SECURITY;
CREATE POLICY bikes_perimeter ON fleet.bikes FOR SELECT
    USING (region = ANY (fleet.current_regions()));

ALTER TABLE fleet.principals ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.principals FORCE ROW LEVEL SECURITY;
CREATE POLICY principals_self ON fleet.principals FOR SELECT
    USING (subject = fleet.current_subject());

ALTER TABLE fleet.principal_regions ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.principal_regions FORCE ROW LEVEL SECURITY;
CREATE POLICY principal_regions_self ON fleet.principal_regions FOR SELECT
    USING (subject = fleet.current_subject());

ALTER TABLE fleet.client_apps ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.client_apps FORCE ROW LEVEL SECURITY;
CREATE POLICY client_apps_self ON fleet.client_apps FOR SELECT
    USING (client_id = fleet.current_client());

ALTER TABLE fleet.cases ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.cases FORCE ROW LEVEL SECURITY;
CREATE POLICY cases_perimeter ON fleet.cases FOR SELECT
    USING (region = ANY (fleet.current_regions()));

-- The owner (migrations, demo data) bypasses nothing: it gets explicit all-rows policies.
CREATE POLICY owner_all ON fleet.regions TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.status_codes TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.stations TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.bikes TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.principals TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.principal_regions TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.client_apps TO fleet_owner USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON fleet.cases TO fleet_owner USING (true) WITH CHECK (true);

-- The server's login role reads through the policies above; it owns nothing.
GRANT SELECT ON fleet.regions, fleet.status_codes, fleet.stations, fleet.bikes,
                fleet.principals, fleet.principal_regions, fleet.client_apps, fleet.cases
      TO fleet_app;
REVOKE ALL ON FUNCTION fleet.act_as(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet.bike_status_as(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.act_as(text, text), fleet.bike_status_as(text, text, text),
      fleet.current_regions(), fleet.current_subject(), fleet.current_client() TO fleet_app;
