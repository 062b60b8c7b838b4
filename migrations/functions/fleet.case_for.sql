-- bikaroo://cases/{caseId} for one caller and any number of cases: per case the caller may see,
-- one 'case' row followed by its 'report' and 'event' rows in time order, each naming its case.
-- Visible = in the perimeter (row-level security) and, except for fleet_operator (who sees any
-- case of their regions), opened by or reported into by the caller. Each row carries the names
-- beside the codes: its region's, and those of its subject and client application
-- (fleet.case_names; NULL for one no longer registered), at most 63 characters each.
CREATE OR REPLACE FUNCTION fleet.case_for(p_subject text, p_client text, p_case_ids text[])
RETURNS TABLE (case_id text, kind text, item_id text, at text, bike_id text, region text,
               state text, subject text, client_id text, issue text, description text,
               detail text, region_name text, subject_name text, client_name text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    -- A role the capability's declaration does not list reads nothing (a setting act_as fixed).
    IF NOT fleet.may_read('cases') THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH c AS (
        SELECT cs.* FROM fleet.cases cs
         WHERE cs.case_id = ANY (p_case_ids)
           AND (a.role = 'fleet_operator' OR cs.opened_by = p_subject
                OR EXISTS (SELECT 1 FROM fleet.damage_reports r
                            WHERE r.case_id = cs.case_id AND r.reported_by = p_subject))
    ), items AS (
        SELECT c.case_id, 0 AS ord, 0::bigint AS seq, 'case'::text AS kind,
               c.case_id AS item_id, c.opened_at AS at, c.bike_id, c.region, c.state,
               c.opened_by AS subject, c.opened_via AS client_id, NULL::text AS issue,
               NULL::text AS description,
               to_char(c.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS detail
          FROM c
        UNION ALL
        SELECT c.case_id, 1, 0, 'report', r.report_id, r.recorded_at, r.bike_id, r.region,
               r.status_after, r.reported_by, r.reported_via, r.issue, r.description,
               r.status_before
          FROM fleet.damage_reports r JOIN c ON r.case_id = c.case_id
        UNION ALL
        SELECT c.case_id, 2, e.event_id, 'event', e.event_id::text, e.at, NULL, e.region, NULL,
               e.actor_subject, e.actor_client, e.kind, NULL, e.report_id
          FROM fleet.case_events e JOIN c ON e.case_id = c.case_id
    ), names AS (
        SELECT c.case_id, n.kind, n.id, n.name FROM c CROSS JOIN LATERAL fleet.case_names(c.case_id) n
    )
    SELECT i.case_id, i.kind, i.item_id,
           to_char(i.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           i.bike_id, i.region, i.state, i.subject, i.client_id, i.issue, i.description,
           i.detail, left(rg.name, 63), left(sn.name, 63), left(cn.name, 63)
      FROM items i
      LEFT JOIN fleet.regions rg ON rg.code = i.region
      LEFT JOIN names sn ON sn.case_id = i.case_id AND sn.kind = 'subject' AND sn.id = i.subject
      LEFT JOIN names cn ON cn.case_id = i.case_id AND cn.kind = 'client' AND cn.id = i.client_id
     ORDER BY i.case_id, i.ord, i.at, i.seq, i.item_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.case_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_for(text, text, text[]) TO fleet_app;
