-- Whether a caller of role p_role, subject p_subject, may see a case of their perimeter (row-level
-- security decides the perimeter; this, the rest): fleet operators and technicians see every
-- case of their regions, the others the cases they opened or reported into. One rule for the
-- case read (fleet.case_for), the report naming a case (fleet.report_damaged_bike_as), the
-- workflow's steps (fleet.case_step_as) and tasks; a case the caller may not see reads exactly
-- like one that does not exist.
CREATE OR REPLACE FUNCTION fleet.case_visible(p_role text, p_subject text, p_case_id text,
                                              p_opened_by text)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    SELECT coalesce(p_role IN ('fleet_operator', 'technician'), false)
           OR coalesce(p_opened_by = p_subject, false)
           OR EXISTS (SELECT 1 FROM damage_reports r
                       WHERE r.case_id = p_case_id AND r.reported_by = p_subject)
$$;

REVOKE ALL ON FUNCTION fleet.case_visible(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_visible(text, text, text, text) TO fleet_app;
