-- Completion of {caseId} (bikaroo://cases/{caseId}, a prompt's caseId) for one caller and any
-- number of prefixes: per prefix, the ids of the cases the caller may read (exactly as
-- fleet.case_for reads them: the perimeter by row-level security, then fleet.case_visible) that
-- start with it, or with IC- and it (a person may type only the digits), at most 100: the
-- active ones first, then the closed, each in id order; each with its region (checked against
-- the perimeter again by the server) and the total number of matches. The prefix is compared
-- literally (starts_with, no LIKE pattern), in upper case: % and _ match only themselves.
CREATE OR REPLACE FUNCTION fleet.case_ids_for(p_subject text, p_client text, p_prefixes text[])
RETURNS TABLE (prefix text, case_id text, region text, total bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    -- Completing a case id reads cases: the case read's roles (a setting act_as fixed).
    IF NOT fleet.may_read('cases') THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT p.prefix, m.case_id, m.region, m.total
      FROM unnest(p_prefixes) AS p(prefix)
     CROSS JOIN LATERAL (
        SELECT cs.case_id, cs.region, count(*) OVER () AS total,
               cs.state = 'closed' AS closed
          FROM fleet.cases cs
         WHERE (starts_with(cs.case_id, upper(p.prefix))
                OR starts_with(cs.case_id, 'IC-' || p.prefix))
           AND fleet.case_visible(a.role, p_subject, cs.case_id, cs.opened_by)
         ORDER BY cs.state = 'closed', length(cs.case_id), cs.case_id
         LIMIT 100) AS m
     ORDER BY p.prefix, m.closed, length(m.case_id), m.case_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.case_ids_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_ids_for(text, text, text[]) TO fleet_app;
