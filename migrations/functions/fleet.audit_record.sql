-- Appends one audit row stamped with the transaction's acting identity (set by act_as).
-- SECURITY DEFINER, owned by the owner role with a fixed search_path: fleet_app has no
-- privilege on fleet.audit_log at all, so a denial (a caller without any write right) is
-- still recorded, and the only way in is this function, which takes the subject and client
-- from the settings (never from its arguments) and the time from the clock.
CREATE OR REPLACE FUNCTION fleet.audit_record(p_tool text, p_target text, p_digest text, p_outcome text,
                                              p_detail text, p_request_id text, p_report text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    v_ref record;
BEGIN
    IF fleet.current_subject() IS NULL OR fleet.current_client() IS NULL THEN
        RAISE EXCEPTION 'audit_record needs an acting identity (fleet.act_as)'
              USING ERRCODE = '42501';
    END IF;
    -- p_request_id is the JSON-RPC id, optionally preceded by the request's W3C trace id and
    -- the token's reference (fleet.audit_ref): stored apart.
    v_ref := fleet.audit_ref(p_request_id);
    INSERT INTO fleet.audit_log (subject, client_id, tool, target, args_digest, outcome, detail,
                                 request_id, report_id, trace_id, token_ref)
    VALUES (fleet.current_subject(), fleet.current_client(), left(p_tool, 128),
            left(p_target, 64), p_digest, p_outcome, left(p_detail, 500),
            v_ref.request_id, p_report, v_ref.trace_id, v_ref.token_ref);
END
$$;

REVOKE ALL ON FUNCTION fleet.audit_record(text, text, text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.audit_record(text, text, text, text, text, text, text) TO fleet_app;
