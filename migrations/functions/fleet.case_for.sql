-- bikaroo://cases/{caseId} for one caller and any number of cases: one row per case the caller
-- may see, with its damage reports and events in time order as JSON arrays (json, not jsonb:
-- their keys keep the order written here). Visible = in the perimeter (row-level security)
-- and, except for fleet_operator (who sees any case of their regions), opened by or reported
-- into by the caller. Beside the codes and ids, their names: the region's, and those of the
-- subjects and client applications (fleet.case_names; NULL for one no longer registered), at
-- most 63 characters each.
CREATE OR REPLACE FUNCTION fleet.case_for(p_subject text, p_client text, p_case_ids text[])
RETURNS TABLE (case_id text, bike_id text, region text, region_name text, state text,
               opened_at text, opened_by text, opened_by_name text, opened_via text,
               opened_via_name text, closed_at text, reports json, events json)
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
    ), names AS (
        SELECT c.case_id, n.kind, n.id, left(n.name, 63) AS name
          FROM c CROSS JOIN LATERAL fleet.case_names(c.case_id) n
    )
    SELECT c.case_id, c.bike_id, c.region, left(rg.name, 63), c.state,
           to_char(c.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           c.opened_by,
           (SELECT n.name FROM names n
             WHERE n.case_id = c.case_id AND n.kind = 'subject' AND n.id = c.opened_by),
           c.opened_via,
           (SELECT n.name FROM names n
             WHERE n.case_id = c.case_id AND n.kind = 'client' AND n.id = c.opened_via),
           to_char(c.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           coalesce((SELECT json_agg(json_build_object(
                        'reportId', r.report_id, 'issue', r.issue,
                        'description', r.description, 'statusBefore', r.status_before,
                        'statusAfter', r.status_after,
                        'recordedAt', to_char(r.recorded_at AT TIME ZONE 'UTC',
                                              'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                        'reportedBy', r.reported_by,
                        'reportedByName', (SELECT n.name FROM names n
                                            WHERE n.case_id = c.case_id AND n.kind = 'subject'
                                              AND n.id = r.reported_by),
                        'clientId', r.reported_via,
                        'clientName', (SELECT n.name FROM names n
                                        WHERE n.case_id = c.case_id AND n.kind = 'client'
                                          AND n.id = r.reported_via))
                        ORDER BY r.recorded_at, r.report_id)
                       FROM fleet.damage_reports r WHERE r.case_id = c.case_id), '[]'::json),
           coalesce((SELECT json_agg(json_build_object(
                        'type', e.kind,
                        'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                        'reportId', e.report_id, 'subject', e.actor_subject,
                        'subjectName', (SELECT n.name FROM names n
                                         WHERE n.case_id = c.case_id AND n.kind = 'subject'
                                           AND n.id = e.actor_subject),
                        'clientId', e.actor_client,
                        'clientName', (SELECT n.name FROM names n
                                        WHERE n.case_id = c.case_id AND n.kind = 'client'
                                          AND n.id = e.actor_client))
                        ORDER BY e.at, e.event_id)
                       FROM fleet.case_events e WHERE e.case_id = c.case_id), '[]'::json)
      FROM c
      LEFT JOIN fleet.regions rg ON rg.code = c.region
     ORDER BY c.case_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.case_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_for(text, text, text[]) TO fleet_app;
