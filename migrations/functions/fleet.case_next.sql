-- What a case at step p_state waits for, for the work queues (fleet.list_cases_for): the tools
-- that take its next step (fleet.case_steps), the roles that may take it (their rows of
-- fleet.capabilities, from the declarations), those roles in words, and whether the caller of the
-- transaction may take it: one of those tools is among the capabilities fleet.act_as found the
-- caller may use (its role, a person where the tool is for people only, its client
-- application's right), and a write-off is decided by someone else than the person who asked
-- for it (p_write_off_requested_by; fleet.case_step_as refuses the asker with same_person).
-- A closed case waits for nothing: no tools, no roles, nobody may act. (plpgsql: a SQL function's
-- body is checked when it is created, before fleet.case_steps exists on a fresh database.)
CREATE OR REPLACE FUNCTION fleet.case_next(p_state text, p_subject text,
                                           p_write_off_requested_by text)
RETURNS TABLE (tools text[], roles text[], by_words text, may_act boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fleet
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH t AS (
        SELECT DISTINCT s.tool FROM fleet.case_steps() s WHERE s.step_from = p_state
    ), r AS (
        SELECT DISTINCT u.role FROM capabilities k CROSS JOIN LATERAL unnest(k.roles) AS u(role)
         WHERE k.name IN (SELECT t.tool FROM t)
    )
    SELECT coalesce((SELECT array_agg(t.tool ORDER BY t.tool) FROM t), '{}'),
           coalesce((SELECT array_agg(r.role ORDER BY r.role) FROM r), '{}'),
           (SELECT string_agg(CASE r.role WHEN 'customer_care' THEN 'customer care'
                                          WHEN 'fleet_operator' THEN 'a fleet operator'
                                          WHEN 'technician' THEN 'a technician'
                                          WHEN 'viewer' THEN 'a viewer'
                                          ELSE r.role END, ' or ' ORDER BY r.role) FROM r),
           EXISTS (SELECT 1 FROM t
                    WHERE fleet.may_read(t.tool)
                      AND NOT (t.tool = 'decide_write_off'
                               AND coalesce(p_write_off_requested_by = p_subject, false)));
END
$$;

REVOKE ALL ON FUNCTION fleet.case_next(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_next(text, text, text) TO fleet_app;
