-- What a case waits for at each step, for the caller of the transaction (fleet.act_as), for the
-- work queues (fleet.list_cases_for): per step (state), the tools that take its next step
-- (fleet.case_steps), the roles that may take it (their rows of fleet.capabilities, from the
-- declarations) and those roles in words, and whether the caller may take it
-- (fleet.may_take_step, the rule the case read applies too): may_act for a case whose pending
-- request is someone else's (or none), may_act_own for one whose pending request the caller
-- made (the operator who asked for a write-off does not decide it). The queues
-- (fleet.list_cases_for) pick may_act_own where cases.write_off_requested_by is the caller,
-- may_act elsewhere. A closed case waits for nothing: no tools, no roles, nobody may act.
-- (plpgsql: a SQL function's body is checked when it is created, before fleet.case_steps
-- exists on a fresh database.)
CREATE OR REPLACE FUNCTION fleet.case_next()
RETURNS TABLE (state text, tools text[], roles text[], by_words text, may_act boolean,
               may_act_own boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH t AS (
        SELECT DISTINCT s.step_from AS state, s.tool FROM fleet.case_steps() s
    ), r AS (
        SELECT DISTINCT t.state, u.role FROM t
          JOIN capabilities k ON k.name = t.tool
         CROSS JOIN LATERAL unnest(k.roles) AS u(role)
    ), x AS (
        SELECT DISTINCT t.state FROM t UNION SELECT 'closed'
    )
    SELECT x.state,
           coalesce((SELECT array_agg(t.tool ORDER BY t.tool) FROM t WHERE t.state = x.state),
                    '{}'),
           coalesce((SELECT array_agg(r.role ORDER BY r.role) FROM r WHERE r.state = x.state),
                    '{}'),
           (SELECT string_agg(CASE r.role WHEN 'customer_care' THEN 'customer care'
                                          WHEN 'fleet_operator' THEN 'a fleet operator'
                                          WHEN 'technician' THEN 'a technician'
                                          WHEN 'viewer' THEN 'a viewer'
                                          ELSE r.role END, ' or ' ORDER BY r.role)
              FROM r WHERE r.state = x.state),
           (SELECT m.may FROM fleet.may_take_step(x.state, fleet.current_subject(), NULL) m),
           (SELECT m.may FROM fleet.may_take_step(x.state, fleet.current_subject(),
                                                  fleet.current_subject()) m)
      FROM x;
END
$$;

REVOKE ALL ON FUNCTION fleet.case_next() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_next() TO fleet_app;
