-- A case as a refused step of the workflow leaves it (fleet.case_step_as passes it to
-- fleet.write_stop): the case as the workflow's tools answer with it (fleet.case_step_view),
-- plus next_steps, the tools that take the case from where it stands (fleet.case_steps; none
-- once closed). The server shows it as the refusal's structuredContent, so that a program knows
-- the step and what comes next while the refusal's words, read by people, name neither. NULL
-- for a case the caller does not see (read under row-level security as the caller).
CREATE OR REPLACE FUNCTION fleet.case_step_refusal(p_case_id text) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    SELECT v || jsonb_build_object(
                    'next_steps',
                    coalesce((SELECT jsonb_agg(DISTINCT s.tool ORDER BY s.tool)
                                FROM fleet.case_steps() s
                               WHERE s.step_from = v ->> 'state'), '[]'::jsonb))
      FROM fleet.case_step_view(p_case_id) v
$$;

REVOKE ALL ON FUNCTION fleet.case_step_refusal(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_step_refusal(text) TO fleet_app;
