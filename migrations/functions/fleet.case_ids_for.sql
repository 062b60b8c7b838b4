-- Completion of {caseId} (bikaroo://cases/{caseId}, a prompt's caseId) for the transaction's
-- identity (set by the unit's fleet.act_as) and any number of prefixes: per prefix, the ids of the cases the caller may read (exactly as
-- fleet.case_for reads them: the perimeter by row-level security, then fleet.case_visible) that
-- start with it, or with IC- and it (a person may type only the digits), at most 100: the
-- active ones first, then the closed, each in id order; each with its region (checked against
-- the perimeter again by the server) and the total number of matches. The prefix is compared
-- literally (starts_with, no LIKE pattern), in upper case: % and _ match only themselves.
-- Completing a case id reads cases: the case read's roles (fleet.may_read('cases'), a setting
-- act_as fixed). Plain SQL, inlined into the statement that calls it (fleet.bike_status_for
-- says how).
CREATE OR REPLACE FUNCTION fleet.case_ids_for(p_prefixes text[])
RETURNS TABLE (prefix text, case_id text, region text, total bigint)
LANGUAGE sql STABLE
AS $$
    SELECT p.prefix, m.case_id, m.region, m.total
      FROM unnest(p_prefixes) AS p(prefix)
     CROSS JOIN LATERAL (
        SELECT cs.case_id, cs.region, count(*) OVER () AS total,
               cs.state = 'closed' AS closed
          FROM fleet.cases cs
         WHERE (starts_with(cs.case_id, upper(p.prefix))
                OR starts_with(cs.case_id, 'IC-' || p.prefix))
           AND fleet.may_read('cases')
           AND fleet.case_visible(fleet.current_fleet_role(), fleet.current_subject(),
                                  cs.case_id, cs.opened_by)
         ORDER BY cs.state = 'closed', length(cs.case_id), cs.case_id
         LIMIT 100) AS m
     ORDER BY p.prefix, m.closed, length(m.case_id), m.case_id
$$;

REVOKE ALL ON FUNCTION fleet.case_ids_for(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_ids_for(text[]) TO fleet_app;
