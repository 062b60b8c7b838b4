-- Sets the acting identity for the rest of the current transaction and returns its rights.
-- An unknown or inactive subject or client gets an empty perimeter and no rights.
CREATE OR REPLACE FUNCTION fleet.act_as(p_subject text, p_client text) RETURNS fleet.acting
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

REVOKE ALL ON FUNCTION fleet.act_as(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.act_as(text, text) TO fleet_app;
