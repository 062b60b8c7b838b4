-- bikaroo://cases/{caseId} for one caller and any number of cases: one row per case the caller
-- may see, with its step (state), the finding and resolution once there are some, who asked for
-- a write-off and who closed the case (for a write-off: who approved it), and its damage reports
-- and events in time order as JSON arrays (json, not jsonb: their keys keep the order written
-- here), each event with its note and the change of the bike's status it made (statusBefore,
-- statusAfter: the report's, or the step's, as the bike back in service or retired; NULL when
-- it made none), what comes next (next_steps: the tools of fleet.case_steps that take the case
-- from its step; none once closed) and whether the caller may take it (you_may_act:
-- fleet.may_take_step, the rule the work queues apply too: role, client application,
-- people-only rule, and the operator who asked for a write-off does not decide it; the token's
-- scopes are the server's to judge). Visible = in the perimeter (row-level security) and by
-- fleet.case_visible (fleet operators and technicians any case of their regions, others the
-- cases they opened or reported into). Beside the codes and ids, their names: the region's, and
-- those of the subjects and client applications (fleet.case_names; NULL for one no longer
-- registered), at most 63 characters each.
-- Plain SQL, inlined into the statement that calls it: the identity (subject, role, perimeter,
-- the capabilities it may use) is the transaction's, set by fleet.act_as; who may use this
-- capability is judged by that statement (fleet.bike_status_for says how). Without an identity
-- it returns nothing.
CREATE OR REPLACE FUNCTION fleet.case_for(p_case_ids text[])
RETURNS TABLE (case_id text, bike_id text, region text, region_name text, state text,
               resolution text, finding text, opened_at text, opened_by text,
               opened_by_name text, opened_via text, opened_via_name text,
               write_off_requested_by text, write_off_requested_by_name text,
               write_off_requested_via text, write_off_requested_via_name text,
               write_off_requested_at text, closed_at text, closed_by text,
               closed_by_name text, closed_via text, closed_via_name text, next_steps json,
               you_may_act boolean, reports json, events json)
LANGUAGE sql STABLE
AS $$
    WITH c AS (
        SELECT cs.* FROM fleet.cases cs
         WHERE cs.case_id = ANY (p_case_ids)
           AND fleet.case_visible(fleet.current_fleet_role(), fleet.current_subject(),
                                  cs.case_id, cs.opened_by)
    ), names AS (
        -- Per case, 'subject:<id>' and 'client:<id>' -> the name.
        SELECT c.case_id, json_object_agg(n.kind || ':' || n.id, left(n.name, 63)) AS m
          FROM c CROSS JOIN LATERAL fleet.case_names(c.case_id) n
         GROUP BY c.case_id
    )
    SELECT c.case_id, c.bike_id, c.region, left(rg.name, 63), c.state, c.resolution, c.finding,
           to_char(c.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           c.opened_by, nm.m ->> ('subject:' || c.opened_by),
           c.opened_via, nm.m ->> ('client:' || c.opened_via),
           c.write_off_requested_by, nm.m ->> ('subject:' || c.write_off_requested_by),
           c.write_off_requested_via, nm.m ->> ('client:' || c.write_off_requested_via),
           to_char(c.write_off_requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           to_char(c.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           c.closed_by, nm.m ->> ('subject:' || c.closed_by),
           c.closed_via, nm.m ->> ('client:' || c.closed_via),
           coalesce((SELECT json_agg(DISTINCT st.tool) FROM fleet.case_steps() st
                      WHERE st.step_from = c.state), '[]'::json),
           (SELECT m.may FROM fleet.may_take_step(c.state, fleet.current_subject(),
                                                  c.write_off_requested_by) m),
           coalesce((SELECT json_agg(json_build_object(
                        'reportId', r.report_id, 'issue', r.issue,
                        'description', r.description, 'statusBefore', r.status_before,
                        'statusAfter', r.status_after,
                        'recordedAt', to_char(r.recorded_at AT TIME ZONE 'UTC',
                                              'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                        'reportedBy', r.reported_by,
                        'reportedByName', nm.m ->> ('subject:' || r.reported_by),
                        'clientId', r.reported_via,
                        'clientName', nm.m ->> ('client:' || r.reported_via))
                        ORDER BY r.recorded_at, r.report_id)
                       FROM fleet.damage_reports r WHERE r.case_id = c.case_id), '[]'::json),
           coalesce((SELECT json_agg(json_build_object(
                        'type', e.kind,
                        'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                        'reportId', e.report_id, 'subject', e.actor_subject,
                        'subjectName', nm.m ->> ('subject:' || e.actor_subject),
                        'clientId', e.actor_client,
                        'clientName', nm.m ->> ('client:' || e.actor_client),
                        'note', e.note,
                        'statusBefore', h.status_from, 'statusAfter', h.status_to)
                        ORDER BY e.at, e.event_id)
                       FROM fleet.case_events e
                       -- The history row the event's report or step wrote, in its transaction.
                       LEFT JOIN LATERAL (
                           SELECT hs.status_from, hs.status_to
                             FROM fleet.bike_status_history hs
                            WHERE hs.bike_id = c.bike_id
                              AND CASE WHEN e.report_id IS NOT NULL
                                       THEN hs.report_id = e.report_id
                                       ELSE hs.case_id = e.case_id AND hs.changed_at = e.at END
                            ORDER BY hs.change_id LIMIT 1) h ON true
                      WHERE e.case_id = c.case_id), '[]'::json)
      FROM c
      LEFT JOIN names nm ON nm.case_id = c.case_id
      LEFT JOIN fleet.regions rg ON rg.code = c.region
     ORDER BY c.case_id
$$;

REVOKE ALL ON FUNCTION fleet.case_for(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_for(text[]) TO fleet_app;
