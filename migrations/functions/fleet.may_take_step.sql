-- Whether the caller of the transaction (fleet.act_as) may take the next step of a case at step
-- p_state whose pending request, if any, was made by p_requested_by: one of the tools that take
-- the case from that step (fleet.case_steps) is among the capabilities act_as found the caller
-- may use (role, a person where the tool is for people only, the client application's right),
-- and fleet.case_step_allowed lets p_subject take it (the operator who asked for a write-off
-- does not decide it). The one answer of the reads: the case read asks it per case
-- (fleet.case_for's you_may_act), the queues per step (fleet.case_next). The token's scopes are
-- the server's to judge. One row, read as (SELECT m.may FROM fleet.may_take_step(...) m): a
-- set-returning SQL function is inlined into the query that reads it (a scalar one holding a
-- subquery is not), so the rule costs what the expression written in place would.
CREATE OR REPLACE FUNCTION fleet.may_take_step(p_state text, p_subject text,
                                               p_requested_by text)
RETURNS TABLE (may boolean)
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT FROM fleet.case_steps() st
                    WHERE st.step_from = p_state AND fleet.may_read(st.tool)
                      AND fleet.case_step_allowed(st.tool, p_subject, p_requested_by))
$$;

REVOKE ALL ON FUNCTION fleet.may_take_step(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.may_take_step(text, text, text) TO fleet_app;
