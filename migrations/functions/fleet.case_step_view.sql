-- A case as the workflow's tools answer with it (request_inspection, record_inspection,
-- close_case, decide_write_off: the columns they return after the fixed ones, in this order;
-- their declarations name them): its step (state), the finding and resolution once there are
-- some, the status of its bike and when the case last changed. Read under row-level security as
-- the caller (no row outside the perimeter). fleet.case_step_as answers with it once a step is
-- done, and fleet.task_state keeps it as a finished task's result.
CREATE OR REPLACE FUNCTION fleet.case_step_view(p_case_id text)
RETURNS TABLE (case_id text, bike_id text, state text, finding text, resolution text,
               bike_status text, updated_at text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet
AS $$
    SELECT c.case_id, c.bike_id, c.state, c.finding, c.resolution, b.status,
           to_char(coalesce(c.updated_at, c.opened_at) AT TIME ZONE 'UTC',
                   'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      FROM cases c
      LEFT JOIN bikes b ON b.bike_id = c.bike_id
     WHERE c.case_id = p_case_id
$$;

REVOKE ALL ON FUNCTION fleet.case_step_view(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_step_view(text) TO fleet_app;
