-- A case as the workflow's tools answer with it (their declaration names these columns): its
-- step (state), the finding and resolution once there are some, the status of its bike and when
-- the case last changed; an object by column names, NULL for a case the caller does not see
-- (read under row-level security as the caller). fleet.case_step_as answers with it once a step
-- is done, and fleet.task_state keeps it as a finished task's result.
CREATE OR REPLACE FUNCTION fleet.case_step_view(p_case_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    SELECT to_jsonb(v) FROM (
        SELECT c.case_id, c.bike_id, c.state, c.finding, c.resolution, b.status AS bike_status,
               to_char(coalesce(c.updated_at, c.opened_at) AT TIME ZONE 'UTC',
                       'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at
          FROM cases c
          LEFT JOIN bikes b ON b.bike_id = c.bike_id
         WHERE c.case_id = p_case_id) v
$$;

REVOKE ALL ON FUNCTION fleet.case_step_view(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_step_view(text) TO fleet_app;
