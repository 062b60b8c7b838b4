-- Ends a write that writes nothing, whatever stops it: its audit row and its answer, in one
-- line of the write function (RETURN fleet.write_stop(w, 'not_found')). p_outcome is
-- forbidden, invalid_arguments, not_found, key_conflict, replayed, confirmation_required, or a
-- lower-case word of the write's own that its declaration words (case_closed). The audit row's
-- outcome is p_audit when given, else the outcome's own: denied, invalid, not_found, conflict,
-- replayed, confirmation_required, or failed for the write's own words; its detail names why
-- (the capability refused, the word refused). p_region: the object's region once found (the
-- server checks it against the caller's perimeter); p_effect: with confirmation_required, what
-- the write would do, in one sentence (the server's question); p_result: with replayed, the
-- first call's result (its report_id, if any, on the audit row).
CREATE OR REPLACE FUNCTION fleet.write_stop(w fleet.write_state, p_outcome text,
                                            p_region text DEFAULT NULL,
                                            p_effect text DEFAULT NULL,
                                            p_result jsonb DEFAULT NULL,
                                            p_audit text DEFAULT NULL)
RETURNS fleet.write_answer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
BEGIN
    PERFORM fleet.audit_record(
        (w.call).tool, (w.call).target, (w.call).digest,
        coalesce(p_audit, CASE p_outcome WHEN 'forbidden' THEN 'denied'
                                         WHEN 'invalid_arguments' THEN 'invalid'
                                         WHEN 'key_conflict' THEN 'conflict'
                                         WHEN 'not_found' THEN p_outcome
                                         WHEN 'replayed' THEN p_outcome
                                         WHEN 'confirmation_required' THEN p_outcome
                                         ELSE 'failed' END),
        CASE WHEN p_outcome = 'forbidden'
             THEN 'role, client application or subject may not use '
                  || coalesce(w.capability, (w.call).tool)
             WHEN p_outcome = 'invalid_arguments'
             THEN 'arguments not of the shapes the tool''s input schema says'
             WHEN p_outcome NOT IN ('not_found', 'key_conflict', 'replayed',
                                    'confirmation_required') THEN p_outcome END,
        (w.call).request_id, p_result ->> 'report_id');
    RETURN (w.acting, p_outcome, p_region, p_effect, p_result, NULL)::fleet.write_answer;
END
$$;

REVOKE ALL ON FUNCTION fleet.write_stop(fleet.write_state, text, text, text, jsonb, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.write_stop(fleet.write_state, text, text, text, jsonb, text)
    TO fleet_app;
