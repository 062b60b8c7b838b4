-- Whether who the caller is on a case lets them take a step of its workflow (the role, the
-- client application and the case's step are judged elsewhere): the fleet operator who asked
-- for a write-off does not decide it. One rule for the step itself (fleet.case_step_as refuses
-- it as same_person) and for what the reads say the caller may do (fleet.may_take_step, which
-- the case read and the work queues answer from).
CREATE OR REPLACE FUNCTION fleet.case_step_allowed(p_tool text, p_subject text,
                                                   p_write_off_requested_by text)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT NOT (p_tool = 'decide_write_off'
                AND p_write_off_requested_by IS NOT DISTINCT FROM p_subject)
$$;

REVOKE ALL ON FUNCTION fleet.case_step_allowed(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_step_allowed(text, text, text) TO fleet_app;
