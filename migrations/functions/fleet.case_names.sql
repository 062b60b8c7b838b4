-- The names of the people and client applications who acted on one case (opened it, reported
-- into it, or left one of its events), for bikaroo://cases/{caseId} to show beside their ids:
-- kind 'subject' (fleet.principals.display_name) or 'client' (fleet.client_apps.name).
-- SECURITY DEFINER, owned by the owner role with a fixed search_path: fleet_app reads only its
-- own rows of principals and client_apps, so only this function names the others, and only for
-- a case in the perimeter the transaction's act_as fixed (none outside one). fleet.case_for
-- calls it once the case is visible to the caller.
CREATE OR REPLACE FUNCTION fleet.case_names(p_case text)
RETURNS TABLE (kind text, id text, name text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    WITH c AS (
        SELECT cs.case_id, cs.opened_by, cs.opened_via FROM cases cs
         WHERE cs.case_id = p_case AND cs.region = ANY (current_regions())
    ), who AS (
        SELECT c.opened_by AS subject, c.opened_via AS client_id FROM c
        UNION
        SELECT r.reported_by, r.reported_via FROM damage_reports r JOIN c USING (case_id)
        UNION
        SELECT e.actor_subject, e.actor_client FROM case_events e JOIN c USING (case_id)
    )
    SELECT 'subject', p.subject, p.display_name FROM principals p
     WHERE p.subject IN (SELECT who.subject FROM who)
    UNION ALL
    SELECT 'client', k.client_id, k.name FROM client_apps k
     WHERE k.client_id IN (SELECT who.client_id FROM who)
$$;

REVOKE ALL ON FUNCTION fleet.case_names(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_names(text) TO fleet_app;
