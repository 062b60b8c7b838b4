-- bikaroo://cases/{caseId}: the caller's rights, then (when visible) one 'case' row followed by
-- its 'report' and 'event' rows in time order. Visible = in the perimeter (RLS) and, except for
-- fleet_operator (who sees any case of their regions), opened by or reported into by the caller.
CREATE OR REPLACE FUNCTION fleet.case_as(p_subject text, p_client text, p_case text)
RETURNS TABLE (out_role text, out_regions text[], out_is_human boolean,
               out_client_may_read boolean, out_client_may_report boolean,
               out_requires_confirmation boolean, kind text, item_id text, at text,
               bike_id text, region text, state text, subject text, client_id text,
               issue text, description text, detail text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    RETURN QUERY
    WITH c AS (
        SELECT cs.* FROM fleet.cases cs
         WHERE cs.case_id = p_case
           AND (a.role = 'fleet_operator' OR cs.opened_by = p_subject
                OR EXISTS (SELECT 1 FROM fleet.damage_reports r
                            WHERE r.case_id = cs.case_id AND r.reported_by = p_subject))
    ), items AS (
        SELECT 0 AS ord, 0::bigint AS seq, 'case'::text AS kind, c.case_id AS item_id,
               c.opened_at AS at, c.bike_id, c.region, c.state, c.opened_by AS subject,
               c.opened_via AS client_id, NULL::text AS issue, NULL::text AS description,
               to_char(c.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS detail
          FROM c
        UNION ALL
        SELECT 1, 0, 'report', r.report_id, r.recorded_at, r.bike_id, r.region, r.status_after,
               r.reported_by, r.reported_via, r.issue, r.description, r.status_before
          FROM fleet.damage_reports r JOIN c ON r.case_id = c.case_id
        UNION ALL
        SELECT 2, e.event_id, 'event', e.event_id::text, e.at, NULL, e.region, NULL,
               e.actor_subject, e.actor_client, e.kind, NULL, e.report_id
          FROM fleet.case_events e JOIN c ON e.case_id = c.case_id
    )
    SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
           a.requires_confirmation, i.kind, i.item_id,
           to_char(i.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           i.bike_id, i.region, i.state, i.subject, i.client_id, i.issue, i.description,
           i.detail
      FROM (SELECT 1) AS one
      LEFT JOIN items i ON true
     ORDER BY i.ord NULLS FIRST, i.at, i.seq, i.item_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.case_as(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_as(text, text, text) TO fleet_app;
