-- An audit row for a call decided outside the database (invalid arguments, missing scope,
-- refused confirmation, a failure): the identity, then the row, in one round trip.
CREATE OR REPLACE FUNCTION fleet.audit_as(p_subject text, p_client text, p_tool text, p_target text,
                                          p_digest text, p_outcome text, p_detail text, p_request_id text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    PERFORM fleet.act_as(p_subject, p_client);
    PERFORM fleet.audit_record(p_tool, p_target, p_digest, p_outcome, p_detail, p_request_id,
                               NULL);
END
$$;

REVOKE ALL ON FUNCTION fleet.audit_as(text, text, text, text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.audit_as(text, text, text, text, text, text, text, text) TO fleet_app;
