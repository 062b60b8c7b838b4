-- 0002: the acting identity and row-level security (docs/security.md, the second line).
-- Every request's work runs in one transaction that starts with fleet.act_as(subject, client):
-- it fixes the identity and the perimeter once, transaction-locally; the policies below only
-- compare rows against those settings (no per-row lookups, see docs/architecture.md).

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

-- The policies below call these three, so they are declared here, failing closed (no perimeter,
-- no subject, no client). Their bodies, and those of fleet.act_as() and fleet.bike_status_as()
-- that this file first created, live in migrations/functions/, which `migrate` applies right
-- after the numbered files (migrations/README.md).
CREATE FUNCTION fleet.current_regions() RETURNS text[] LANGUAGE sql AS $$ SELECT NULL::text[] $$;
CREATE FUNCTION fleet.current_subject() RETURNS text LANGUAGE sql AS $$ SELECT NULL::text $$;
CREATE FUNCTION fleet.current_client() RETURNS text LANGUAGE sql AS $$ SELECT NULL::text $$;

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
