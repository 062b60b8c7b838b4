-- Ends a write that writes nothing, whatever stops it: its audit row and its answer, in one
-- line of the write function (RETURN fleet.write_stop(w, 'not_found')). p_outcome is
-- forbidden, invalid_arguments, not_found, key_conflict, replayed, confirmation_required, or a
-- lower-case word of the write's own that its declaration words (case_closed). The audit row's
-- outcome is p_audit when given, else the outcome's own: denied, invalid, not_found, conflict,
-- replayed, confirmation_required, or failed for the write's own words; its detail names why
-- (the capability refused, the word refused). p_region: the object's region once found (the
-- server checks it against the caller's perimeter); p_effect: with confirmation_required, what
-- the write would do, in one sentence (the server's question); p_result: with replayed, the
-- first call's result (its report_id, if any, on the audit row); with a refusal of the write's
-- own, what it names as it stands, by the declaration's column names (the server shows it as
-- the refusal's structuredContent: its optional columns say what only a refusal carries).
-- With confirmation_required, p_version is the version of what the question names (the server
-- seals it with the question: fleet.write_asks). A call the user confirmed that asks again
-- answered a question about an earlier version: nothing is written, the audit row says conflict,
-- and the new question starts with p_changed, what changed since, in the user's words.
CREATE OR REPLACE FUNCTION fleet.write_stop(w fleet.write_state, p_outcome text,
                                            p_region text DEFAULT NULL,
                                            p_effect text DEFAULT NULL,
                                            p_result jsonb DEFAULT NULL,
                                            p_audit text DEFAULT NULL,
                                            p_version text DEFAULT NULL,
                                            p_changed text DEFAULT NULL)
RETURNS fleet.write_answer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    v_stale boolean := p_outcome = 'confirmation_required'
                       AND coalesce((w.call).confirmed, false);
BEGIN
    PERFORM fleet.audit_record(
        (w.call).tool, (w.call).target, (w.call).digest,
        coalesce(p_audit, CASE WHEN v_stale THEN 'conflict'
                               WHEN p_outcome = 'forbidden' THEN 'denied'
                               WHEN p_outcome = 'invalid_arguments' THEN 'invalid'
                               WHEN p_outcome = 'key_conflict' THEN 'conflict'
                               WHEN p_outcome IN ('not_found', 'replayed',
                                                  'confirmation_required') THEN p_outcome
                               ELSE 'failed' END),
        CASE WHEN v_stale
             THEN 'confirmed a question about an earlier version of what it names: asked again'
             WHEN p_outcome = 'forbidden'
             THEN 'role, client application or subject may not use '
                  || coalesce(w.capability, (w.call).tool)
             WHEN p_outcome = 'invalid_arguments'
             THEN 'arguments not of the shapes the tool''s input schema says'
             WHEN p_outcome NOT IN ('not_found', 'key_conflict', 'replayed',
                                    'confirmation_required') THEN p_outcome END,
        (w.call).request_id, p_result ->> 'report_id');
    RETURN (w.acting, p_outcome, p_region,
            CASE WHEN v_stale
                 THEN concat_ws(' ', coalesce(p_changed,
                                              'What you were asked about has changed since.'),
                                p_effect)
                 ELSE p_effect END,
            p_result, NULL, p_version)::fleet.write_answer;
END
$$;

REVOKE ALL ON FUNCTION fleet.write_stop(fleet.write_state, text, text, text, jsonb, text, text,
                                        text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.write_stop(fleet.write_state, text, text, text, jsonb, text, text,
                                           text) TO fleet_app;
