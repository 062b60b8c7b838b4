-- One page of a work queue (fleet.list_cases_for): the ids of the cases of one query, in queue
-- order, for the transaction's identity (set by the unit's fleet.act_as; none: no case). The
-- query is the JSON object the server writes: {"arguments": the call's filters, "after": the
-- position of the last row of the previous page or null, "limit": the rows wanted}; its filters
-- are those fleet.list_cases_for lists. waitingForMe keeps the cases whose next step the caller
-- may take (fleet.case_next), the operator who asked for a write-off excepted. plpgsql for one
-- reason: EXECUTE plans the page's constant text with this query's values (bound, never written
-- into it), so an absent filter drops out of the plan and the page reads the index of its
-- order (cases_waiting_idx, cases_bike_idx: 0023); a plan cached for every query would scan
-- every case the caller may see.
CREATE OR REPLACE FUNCTION fleet.list_cases_page(p_query jsonb)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    v_role    text := fleet.current_fleet_role();
    v_subject text := fleet.current_subject();
    v_args    jsonb := p_query -> 'arguments';
    v_after   text := p_query ->> 'after';
    v_act     text[];
    v_own     text[];
    v_page    text[];
BEGIN
    IF v_subject IS NULL THEN
        RETURN '{}';
    END IF;
    -- The steps the caller may take on a case whose pending request is someone else's (v_act)
    -- and on one whose pending request is theirs (v_own).
    SELECT coalesce(array_agg(n.state) FILTER (WHERE n.may_act), '{}'),
           coalesce(array_agg(n.state) FILTER (WHERE n.may_act_own), '{}')
      INTO v_act, v_own
      FROM fleet.case_next() n;
    EXECUTE $page$
        SELECT coalesce(array_agg(p.case_id ORDER BY p.step_at, p.case_id), '{}')
          FROM (SELECT cs.case_id, cs.step_at FROM fleet.cases cs
                 WHERE (cs.state = $1 OR ($1 IS NULL AND $2)
                        OR ($1 IS NULL AND NOT $2 AND cs.state <> 'closed'))
                   AND ($3 IS NULL OR cs.region = $3)
                   AND ($4 IS NULL OR cs.bike_id = $4)
                   AND ($5 IS NULL OR (cs.step_at, cs.case_id) > ($5, $6))
                   AND fleet.case_visible($7, $8, cs.case_id, cs.opened_by)
                   AND (NOT $9
                        OR (cs.state = ANY ($10)
                            AND cs.write_off_requested_by IS DISTINCT FROM $8)
                        OR (cs.state = ANY ($11) AND cs.write_off_requested_by = $8))
                 ORDER BY cs.step_at, cs.case_id
                 LIMIT $12) p
    $page$ INTO v_page
    USING v_args ->> 'step', coalesce(v_args -> 'includeClosed' = 'true'::jsonb, false),
          v_args ->> 'region', v_args ->> 'bikeId',
          split_part(v_after, '|', 1)::timestamptz, split_part(v_after, '|', 2), v_role,
          v_subject, coalesce(v_args -> 'waitingForMe' = 'true'::jsonb, false), v_act, v_own,
          least(greatest(coalesce((p_query ->> 'limit')::integer, 21), 1), 101);
    RETURN v_page;
END
$$;

REVOKE ALL ON FUNCTION fleet.list_cases_page(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.list_cases_page(jsonb) TO fleet_app;
