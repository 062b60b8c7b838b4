-- list_cases (server/capabilities/list_cases.json) for one caller and any number of queries: the
-- cases the caller may see, oldest waiting first, one page per query. Each query (the read's key,
-- echoed in the column query) is a JSON object the server writes: {"arguments": the call's
-- filters, "after": the position of the last row of the previous page or null, "limit": the
-- rows wanted}. The filters:
--   step           only the cases at this step; without it, the active ones (every step but
--                  closed), or every case with includeClosed true
--   region         only this region's cases (one outside the perimeter lists nothing)
--   bikeId         only this bike's cases
--   waitingForMe   only the cases whose next step the caller may take (fleet.case_next)
--   includeClosed  the closed cases too (a bike's history)
-- Visible cases: in the perimeter (row-level security) and by fleet.case_visible, exactly as
-- bikaroo://cases/{caseId} reads them, so a filter naming something the caller may not see
-- lists nothing, as one naming nothing at all. Order: when the case reached its step
-- (cases.step_at, 0023), then its id; sort_key is that pair, and a page "after" one starts past
-- it. Per row: the step and since when, what it waits for in words and who may take the next
-- step (fleet.case_next: its tools, their roles, whether the caller may), who moved it to its
-- step and why (the last event that moved it), who opened it, who asked for a pending
-- write-off, where the bike is, the finding, how many reports and the last issue reported;
-- people, client applications, regions and stations with their names (fleet.case_names; NULL
-- for one no longer registered), at most 63 characters each.
CREATE OR REPLACE FUNCTION fleet.list_cases_for(p_subject text, p_client text, p_queries text[])
RETURNS TABLE (query text, sort_key text, case_id text, bike_id text, region text,
               region_name text, state text, since text, waiting_for text, next_steps json,
               next_by json, you_may_act boolean, step_by text, step_by_name text,
               step_via text, step_via_name text, step_note text, opened_at text,
               opened_by text, opened_by_name text, opened_via text, opened_via_name text,
               write_off_requested_by text, write_off_requested_by_name text,
               bike_status text, station text, station_name text, finding text,
               report_count integer, last_issue text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
#variable_conflict use_column
DECLARE
    a fleet.acting;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    -- A role the capability's declaration does not list reads nothing (a setting act_as fixed).
    IF NOT fleet.may_read('list_cases') THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH q AS (
        SELECT k.x AS query, k.j -> 'arguments' AS args, k.j ->> 'after' AS after,
               least(greatest(coalesce((k.j ->> 'limit')::integer, 21), 1), 101) AS lim
          FROM (SELECT x, x::jsonb AS j FROM unnest(p_queries) AS x) k
    ), f AS (
        SELECT q.query, q.lim, q.args ->> 'step' AS step, q.args ->> 'region' AS region,
               q.args ->> 'bikeId' AS bike,
               coalesce(q.args -> 'waitingForMe' = 'true'::jsonb, false) AS mine,
               coalesce(q.args -> 'includeClosed' = 'true'::jsonb, false) AS closed,
               split_part(q.after, '|', 1)::timestamptz AS after_at,
               split_part(q.after, '|', 2) AS after_id
          FROM q
    )
    SELECT f.query,
           to_char(c.step_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|'
               || c.case_id,
           c.case_id, c.bike_id, c.region, left(rg.name, 63), c.state,
           to_char(c.step_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           CASE WHEN c.state <> 'closed' THEN
               format('%s, by %s of %s%s',
                      CASE nx.tools[1] WHEN 'request_inspection' THEN 'an inspection request'
                                       WHEN 'record_inspection' THEN 'the inspection'
                                       WHEN 'close_case' THEN
                                           'closing it (repaired, no fault found or written off)'
                                       WHEN 'decide_write_off' THEN 'a decision on the write-off'
                                       ELSE array_to_string(nx.tools, ' or ') END,
                      nx.by_words, coalesce(left(rg.name, 63), c.region),
                      CASE WHEN c.state = 'awaiting_approval' THEN
                          ' other than ' || coalesce(nm.m ->> ('subject:' || c.write_off_requested_by),
                                                     c.write_off_requested_by)
                      ELSE '' END)
           END,
           to_json(nx.tools), to_json(nx.roles), nx.may_act,
           ev.actor_subject, nm.m ->> ('subject:' || ev.actor_subject),
           ev.actor_client, nm.m ->> ('client:' || ev.actor_client), ev.note,
           to_char(c.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           c.opened_by, nm.m ->> ('subject:' || c.opened_by),
           c.opened_via, nm.m ->> ('client:' || c.opened_via),
           c.write_off_requested_by, nm.m ->> ('subject:' || c.write_off_requested_by),
           b.status, b.station_id, left(st.name, 63), c.finding, c.report_count, lr.issue
      FROM f
     CROSS JOIN LATERAL (
        SELECT cs.* FROM fleet.cases cs
         WHERE (cs.state = f.step OR (f.step IS NULL AND (f.closed OR cs.state <> 'closed')))
           AND (f.region IS NULL OR cs.region = f.region)
           AND (f.bike IS NULL OR cs.bike_id = f.bike)
           AND (f.after_at IS NULL OR (cs.step_at, cs.case_id) > (f.after_at, f.after_id))
           AND fleet.case_visible(a.role, p_subject, cs.case_id, cs.opened_by)
           AND (NOT f.mine OR (SELECT n.may_act
                                 FROM fleet.case_next(cs.state, p_subject,
                                                      cs.write_off_requested_by) n))
         ORDER BY cs.step_at, cs.case_id
         LIMIT f.lim) c
     CROSS JOIN LATERAL fleet.case_next(c.state, p_subject, c.write_off_requested_by) nx
      LEFT JOIN LATERAL (
        -- 'subject:<id>' and 'client:<id>' -> the name, for this case's people and applications.
        SELECT json_object_agg(n.kind || ':' || n.id, left(n.name, 63)) AS m
          FROM fleet.case_names(c.case_id) n) nm ON true
      LEFT JOIN LATERAL (
        SELECT e.actor_subject, e.actor_client, e.note FROM fleet.case_events e
         WHERE e.case_id = c.case_id AND e.kind <> 'report_added'
         ORDER BY e.event_id DESC LIMIT 1) ev ON true
      LEFT JOIN LATERAL (
        SELECT r.issue FROM fleet.damage_reports r
         WHERE r.case_id = c.case_id ORDER BY r.recorded_at DESC, r.report_id DESC LIMIT 1) lr
        ON true
      LEFT JOIN fleet.regions rg ON rg.code = c.region
      LEFT JOIN fleet.bikes b ON b.bike_id = c.bike_id
      LEFT JOIN fleet.stations st ON st.station_id = b.station_id
     ORDER BY f.query, c.step_at, c.case_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.list_cases_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.list_cases_for(text, text, text[]) TO fleet_app;
