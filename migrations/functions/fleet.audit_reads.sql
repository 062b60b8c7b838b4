-- The audit rows of one caller's reads in a batch, in one INSERT, in the batch's transaction: a
-- read answers only once its row has committed. p_calls holds one object per audited call
-- (tool, target, key, digest, the request reference in its parts: id, trace, token, as
-- fleet.audit_ref splits it, and list: whether the read is a list); its outcome is the
-- database's: denied when the caller's rights (p_allowed, from fleet.act_as in the same
-- statement) refuse the read, ok for a list (an empty one too: its answer) or when its key is
-- among p_found (the keys the read returned under row-level security), not_found otherwise.
-- SECURITY DEFINER like fleet.audit_record (fleet_app holds no privilege on fleet.audit_log);
-- the rows name the caller given, as fleet.audit_as already lets the login role name any. Time
-- from the clock, lengths capped; the columns' types (domains, 0027) refuse a malformed trace id
-- or token reference. A lock on audit_log (an administrator's LOCK TABLE, ALTER TABLE, VACUUM FULL)
-- fails the batch after lock_timeout instead of stalling every read behind it: they answer 503.
CREATE OR REPLACE FUNCTION fleet.audit_reads(p_subject text, p_client text, p_calls jsonb,
                                             p_allowed boolean, p_found text[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
SET lock_timeout = '2s'
AS $$
DECLARE
    n integer;
BEGIN
    IF jsonb_array_length(p_calls) = 0 THEN
        RETURN 0;
    END IF;
    IF jsonb_array_length(p_calls) > 1000 THEN
        RAISE EXCEPTION 'audit_reads: at most 1000 rows' USING ERRCODE = '54000';
    END IF;
    INSERT INTO fleet.audit_log (subject, client_id, tool, target, args_digest, outcome,
                                 request_id, trace_id, token_ref)
    SELECT p_subject, p_client, left(c.tool, 128), left(c.target, 64), c.digest,
           CASE WHEN NOT coalesce(p_allowed, false) THEN 'denied'
                WHEN c.list OR c.key = ANY (p_found) THEN 'ok'
                ELSE 'not_found' END,
           left(c.id, 128), c.trace, c.token
      FROM jsonb_to_recordset(p_calls)
           AS c(tool text, target text, key text, digest text, id text, trace text, token text,
                list boolean);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION fleet.audit_reads(text, text, jsonb, boolean, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.audit_reads(text, text, jsonb, boolean, text[]) TO fleet_app;
