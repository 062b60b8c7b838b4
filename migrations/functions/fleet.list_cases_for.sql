-- list_cases (server/capabilities/list_cases.json) for any number of queries: the
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
-- Plain SQL, inlined into the statement that calls it (fleet.bike_status_for says how): the
-- identity is the transaction's, set by the unit's fleet.act_as; each query's page of ids is
-- fleet.list_cases_page's, planned for its own filters.
CREATE OR REPLACE FUNCTION fleet.list_cases_for(p_queries text[])
RETURNS TABLE (query text, sort_key text, case_id text, bike_id text, region text,
               region_name text, state text, since text, waiting_for text, next_steps json,
               next_by json, you_may_act boolean, step_by text, step_by_name text,
               step_via text, step_via_name text, step_note text, opened_at text,
               opened_by text, opened_by_name text, opened_via text, opened_via_name text,
               write_off_requested_by text, write_off_requested_by_name text,
               bike_status text, station text, station_name text, finding text,
               report_count integer, last_issue text)
LANGUAGE sql STABLE
AS $$
    SELECT q.query,
           to_char(c.step_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|'
               || c.case_id,
           c.case_id, c.bike_id, c.region, left(rg.name, 63), c.state,
           to_char(c.step_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           CASE WHEN c.state <> 'closed' THEN
               format('%s, by %s of %s%s',
                      CASE nx.tools[1]
                          WHEN 'request_inspection' THEN 'an inspection request'
                          WHEN 'record_inspection' THEN 'the inspection'
                          WHEN 'close_case' THEN
                              'closing it (repaired, no fault found or written off)'
                          WHEN 'decide_write_off' THEN 'a decision on the write-off'
                          ELSE array_to_string(nx.tools, ' or ') END,
                      nx.by_words, coalesce(left(rg.name, 63), c.region),
                      CASE WHEN c.state = 'awaiting_approval' THEN
                          ' other than '
                          || coalesce(nm.m ->> ('subject:' || c.write_off_requested_by),
                                      c.write_off_requested_by)
                      ELSE '' END)
           END,
           to_json(nx.tools), to_json(nx.roles),
           CASE WHEN c.write_off_requested_by = fleet.current_subject() THEN nx.may_act_own
                ELSE nx.may_act END,
           ev.actor_subject, nm.m ->> ('subject:' || ev.actor_subject),
           ev.actor_client, nm.m ->> ('client:' || ev.actor_client), ev.note,
           to_char(c.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           c.opened_by, nm.m ->> ('subject:' || c.opened_by),
           c.opened_via, nm.m ->> ('client:' || c.opened_via),
           c.write_off_requested_by, nm.m ->> ('subject:' || c.write_off_requested_by),
           b.status, b.station_id, left(st.name, 63), c.finding, c.report_count, lr.issue
      FROM unnest(p_queries) WITH ORDINALITY AS q(query, qn)
     CROSS JOIN LATERAL unnest(fleet.list_cases_page(q.query::jsonb))
           WITH ORDINALITY AS pg(case_id, n)
      JOIN fleet.cases c ON c.case_id = pg.case_id
      JOIN fleet.case_next() nx ON nx.state = c.state
      LEFT JOIN LATERAL (
        -- 'subject:<id>' and 'client:<id>' -> the name, for this case's people and
        -- applications.
        SELECT json_object_agg(n.kind || ':' || n.id, left(n.name, 63)) AS m
          FROM fleet.case_names(c.case_id) n) nm ON true
      LEFT JOIN LATERAL (
        SELECT e.actor_subject, e.actor_client, e.note FROM fleet.case_events e
         WHERE e.case_id = c.case_id AND e.kind <> 'report_added'
         ORDER BY e.event_id DESC LIMIT 1) ev ON true
      LEFT JOIN LATERAL (
        SELECT r.issue FROM fleet.damage_reports r
         WHERE r.case_id = c.case_id ORDER BY r.recorded_at DESC, r.report_id DESC
         LIMIT 1) lr ON true
      LEFT JOIN fleet.regions rg ON rg.code = c.region
      LEFT JOIN fleet.bikes b ON b.bike_id = c.bike_id
      LEFT JOIN fleet.stations st ON st.station_id = b.station_id
     ORDER BY q.qn, pg.n
$$;

REVOKE ALL ON FUNCTION fleet.list_cases_for(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.list_cases_for(text[]) TO fleet_app;
